import { createHmac } from 'node:crypto';
import { nowDate } from '@svc/core';

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
 * number against it. Deployed stages set SVC_CARD_FINGERPRINT_KEY (a secret); locally the
 * simulated provider uses a fixed key, which is fine for simulated cards only.
 */
export function cardFingerprint(digits: string): string {
  const key = process.env.SVC_CARD_FINGERPRINT_KEY ?? 'simulated-provider-local-key';
  return createHmac('sha256', key).update(digits).digest('base64url').slice(0, 22);
}
