import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { CAPTCHA_SECRET_OUTPUT } from '@svc/api';
import { stageSecret } from './stage-secret';

/** The reCAPTCHA secret key from the environment (never the command line): one line, no spaces. */
export function captchaSecretFrom(env: NodeJS.ProcessEnv): string {
  const value = env.SVC_CAPTCHA_SECRET?.trim();
  if (!value) throw new Error('Set SVC_CAPTCHA_SECRET in the environment to the reCAPTCHA secret key');
  if (/\s/.test(value)) throw new Error('SVC_CAPTCHA_SECRET holds whitespace: give the secret key alone');
  return value;
}

/**
 * Puts the reCAPTCHA secret key (the half of the key pair the page does not embed) into a
 * deployed stage's CaptchaSecret. A stage whose captcha is off has none and says so.
 */
export async function configureCaptcha(
  stage: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const value = captchaSecretFrom(env);
  const { secretId, secrets } = await stageSecret(stage, CAPTCHA_SECRET_OUTPUT, 'captcha configure');
  await secrets.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: value }));
  return `Set the reCAPTCHA secret key of stage ${stage}; onboarding reads it at its next cold start`;
}
