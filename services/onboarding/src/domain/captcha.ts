import { logger, sdkClient } from '@svc/core';

/**
 * The captcha behind the e-mail existence check, pluggable by configuration
 * (`SVC_CAPTCHA_VERIFIER`):
 * - `recaptcha` (the default, and what deployed stages run): Google's server-side verification
 *   call with the secret from `SVC_CAPTCHA_SECRET` or, in AWS, the Secrets Manager secret named
 *   by `SVC_CAPTCHA_SECRET_ARN`;
 * - `test` (the local runtime and the tests): accepts `test-captcha-ok` and nothing else;
 * - `off` (a deployed stage whose config turns the captcha off, for made-up data only): no
 *   captcha; any token the request carries passes (the page sends `captcha-off`).
 * The default is the real verifier, so a stage that forgets the setting fails closed.
 */
export const TEST_CAPTCHA_TOKEN = 'test-captcha-ok';
export const CAPTCHA_OFF_TOKEN = 'captcha-off';
const VERIFY_URL = 'https://www.google.com/recaptcha/api/siteverify';
const VERIFY_TIMEOUT_MS = 5_000;

export type CaptchaKind = 'recaptcha' | 'test' | 'off';

export function captchaKind(): CaptchaKind {
  const verifier = process.env.SVC_CAPTCHA_VERIFIER;
  return verifier === 'test' || verifier === 'off' ? verifier : 'recaptcha';
}

let secret: Promise<string> | undefined;

async function loadSecret(): Promise<string> {
  if (process.env.SVC_CAPTCHA_SECRET) return process.env.SVC_CAPTCHA_SECRET;
  const arn = process.env.SVC_CAPTCHA_SECRET_ARN;
  if (!arn) throw new Error('No captcha secret configured (SVC_CAPTCHA_SECRET_ARN)');
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: arn }));
  if (!out.SecretString) throw new Error('The captcha secret is empty');
  return out.SecretString;
}

/** Forgets the cached secret (tests that change the configuration). */
export function resetCaptchaSecret(): void {
  secret = undefined;
}

/** The page's host: `SVC_CAPTCHA_HOSTNAME`, else the host of `SVC_CONNECT_URL`. */
function expectedHostname(): string | undefined {
  if (process.env.SVC_CAPTCHA_HOSTNAME) return process.env.SVC_CAPTCHA_HOSTNAME.toLowerCase();
  const connect = process.env.SVC_CONNECT_URL;
  return connect && URL.canParse(connect) ? new URL(connect).hostname.toLowerCase() : undefined;
}

export async function verifyCaptcha(token: string): Promise<boolean> {
  if (token === '' || token.length > 4096) return false;
  const kind = captchaKind();
  if (kind === 'off') return true;
  if (kind === 'test') return token === TEST_CAPTCHA_TOKEN;
  secret ??= loadSecret();
  let key: string;
  try {
    key = await secret;
  } catch (error) {
    secret = undefined;
    throw error;
  }
  const response = await fetch(process.env.SVC_CAPTCHA_VERIFY_URL ?? VERIFY_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ secret: key, response: token }).toString(),
    signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`The captcha verification answered ${response.status}`);
  const outcome = (await response.json()) as { success?: unknown; hostname?: unknown; 'error-codes'?: unknown };
  if (outcome.success !== true) {
    logger.info('Captcha refused', { errors: outcome['error-codes'] });
    return false;
  }
  // A token solved on another site (with our site key) does not count.
  const expected = expectedHostname();
  if (expected && typeof outcome.hostname === 'string' && outcome.hostname.toLowerCase() !== expected) {
    logger.info('Captcha solved for another host', { hostname: outcome.hostname });
    return false;
  }
  return true;
}
