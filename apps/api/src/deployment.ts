/** Names a deployed stage is found by: the CDK app creates them, `pnpm ops --stage` reads them. */
export const stackName = (stage: string) => `svc-fundraising-${stage}`;
export const TABLE_NAME_OUTPUT = 'TableName';
export const API_URL_OUTPUT = 'ApiUrl';
/** The ARN of the stage's Stripe keys secret, for `pnpm ops stripe configure`. */
export const STRIPE_SECRET_OUTPUT = 'StripeSecretArn';
/** The ARN of the stage's reCAPTCHA secret key, for `pnpm ops captcha configure` (reCAPTCHA stages only). */
export const CAPTCHA_SECRET_OUTPUT = 'CaptchaSecretArn';
/** The search engine's cluster and the secret the Data API signs in with (`pnpm ops search:rebuild`). */
export const SEARCH_CLUSTER_OUTPUT = 'SearchClusterArn';
export const SEARCH_SECRET_OUTPUT = 'SearchSecretArn';
