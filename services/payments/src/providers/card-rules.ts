import { createHmac } from 'node:crypto';
import { nowDate, sdkClient } from '@svc/core';
import * as z from 'zod';

/** The contract's raw card fields (payment_information of a card payment), as every provider reads them. */
/**
 * What 3-D Secure 2 needs of a card payment the donor makes in a browser, in our words: the
 * browser's details (as Adyen Web's `browserInfo` gives them), the page's origin, the donor's IP
 * address and e-mail and their billing address. Accepted on every card payment, so one request
 * suits every provider of a route; Adyen requires them (adyen-provider.ts cites where), the
 * others do not use them. Never stored.
 */
export const threeDSecureFields = {
  browser_info: z
    .object({
      acceptHeader: z.string().min(1).max(1000),
      colorDepth: z.number().int().min(1).max(64),
      javaEnabled: z.boolean(),
      javaScriptEnabled: z.boolean().optional(),
      language: z.string().min(1).max(35),
      screenHeight: z.number().int().min(0).max(100_000),
      screenWidth: z.number().int().min(0).max(100_000),
      timeZoneOffset: z.number().int().min(-900).max(900),
      userAgent: z.string().min(1).max(1000),
    })
    .strict()
    .optional(),
  /** The donation page's origin (scheme, host and port), where 3-D Secure's challenge returns. */
  origin: z
    .url({ protocol: /^https?$/ })
    .max(80)
    .refine((value) => new URL(value).origin === value, 'An origin is a scheme, a host and a port, no path')
    .optional(),
  donor_ip_address: z.union([z.ipv4(), z.ipv6()]).optional(),
  email: z.email().max(254).optional(),
  billing_address: z
    .object({
      street: z.string().min(1).max(200),
      house_number: z.string().min(1).max(50),
      postal_code: z.string().min(1).max(10),
      city: z.string().min(1).max(100),
      country: z.string().regex(/^[A-Z]{2}$/, 'An ISO 3166-1 alpha-2 code, e.g. CH'),
      state: z.string().min(1).max(3).optional(),
    })
    .strict()
    .optional(),
};

export const rawCardSchema = z.object({
  number: z.string().transform((value) => value.replace(/[\s-]/g, '')),
  expiry_month: z.coerce.number().int().min(1).max(12),
  expiry_year: z.coerce.number().int().min(2000).max(2100),
  cvv: z.string().regex(/^\d{3,4}$/),
  cardholder: z.string().max(200).optional(),
  brand: z.string().max(40).optional(),
  ...threeDSecureFields,
});

/** Luhn (mod 10) check of a card number given as digits. */
export function passesLuhn(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A card is valid through the last day of its expiry month (by the service clock, UTC). */
export function isExpired(month: number, year: number): boolean {
  const today = nowDate();
  const current = today.getUTCFullYear() * 12 + today.getUTCMonth();
  return year * 12 + (month - 1) < current;
}

export function brandOf(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  return 'unknown';
}

/**
 * The same card always gives the same fingerprint, and nobody without the key can test a guessed
 * number against it. Deployed stages keep the key in Secrets Manager
 * (SVC_CARD_FINGERPRINT_SECRET_ARN, read once per container); locally a fixed key serves the
 * simulated provider's test cards.
 */
let fingerprintKey: Promise<string> | undefined;

/**
 * Where the key comes from. A deployed function without the secret's ARN is a deployment error,
 * never a reason to use the local key (fingerprints made with it would be guessable): it throws,
 * and the payments function checks this when its module loads, so it fails at cold start.
 */
export function fingerprintKeySource(
  env: NodeJS.ProcessEnv = process.env,
): { secretArn: string } | { localKey: string } {
  if (env.SVC_CARD_FINGERPRINT_SECRET_ARN) return { secretArn: env.SVC_CARD_FINGERPRINT_SECRET_ARN };
  if (env.AWS_LAMBDA_FUNCTION_NAME) {
    throw new Error('SVC_CARD_FINGERPRINT_SECRET_ARN is not set: a deployed function never uses the local key');
  }
  return { localKey: env.SVC_CARD_FINGERPRINT_KEY ?? 'simulated-provider-local-key' };
}

function loadFingerprintKey(): Promise<string> {
  fingerprintKey ??= (async () => {
    const source = fingerprintKeySource();
    if ('localKey' in source) return source.localKey;
    const secretArn = source.secretArn;
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (!out.SecretString) throw new Error('The card fingerprint secret is empty');
    return out.SecretString;
  })();
  fingerprintKey.catch(() => {
    fingerprintKey = undefined;
  });
  return fingerprintKey;
}

export async function cardFingerprint(digits: string): Promise<string> {
  return createHmac('sha256', await loadFingerprintKey())
    .update(digits)
    .digest('base64url')
    .slice(0, 22);
}
