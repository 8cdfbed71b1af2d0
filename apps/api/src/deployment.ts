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
/**
 * The dead-letter queues of the SQS-fed workers, by the name `pnpm ops dlq:pull --queue` takes,
 * and the stack output holding each one's URL. What waits there is the worker's own SQS message
 * (for fan-out also an event the rule could not queue, with the same body), so a pulled message
 * replays as an SQS event of that worker. The stream publisher's dead-letter queue has no entry:
 * it holds the positions of table stream records given up on, not messages a function receives.
 */
export const DEAD_LETTER_QUEUE_OUTPUTS = {
  billing: 'BillingDeadLetterQueueUrl',
  delivery: 'DeliveryDeadLetterQueueUrl',
  'fan-out': 'FanOutDeadLetterQueueUrl',
  files: 'FilesDeadLetterQueueUrl',
  mail: 'MailDeadLetterQueueUrl',
  receipts: 'ReceiptsDeadLetterQueueUrl',
} as const;
export type DeadLetterQueueName = keyof typeof DEAD_LETTER_QUEUE_OUTPUTS;

/**
 * What `pnpm ops prewarm` changes for a known busy date and puts back after it, by output: the
 * payments function and the alias its routes invoke (provisioned concurrency goes on the alias),
 * the HTTP API and its stage (throttling), and the stage's configured throttle as `rate/burst`
 * (what `--reset` returns the stage to).
 */
/**
 * Where `pnpm ops prewarm` puts the reset it schedules for `--until` (issue 46): the schedule
 * groups of the reset and of the check a day later, and the role EventBridge Scheduler assumes to
 * make their calls (infra/constructs/prewarm-alarms.ts).
 */
export const PREWARM_SCHEDULE_OUTPUTS = {
  role: 'PrewarmResetRoleArn',
  resetGroup: 'PrewarmResetScheduleGroup',
  checkGroup: 'PrewarmCheckScheduleGroup',
} as const;

export const PREWARM_OUTPUTS = {
  paymentsFunction: 'PaymentsFunctionArn',
  paymentsAlias: 'PaymentsFunctionAlias',
  apiId: 'HttpApiId',
  apiStage: 'HttpApiStageName',
  apiThrottle: 'ApiThrottle',
} as const;
