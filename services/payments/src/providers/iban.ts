import { normaliseIban } from '@svc/core';

export { isValidIban, normaliseIban } from '@svc/core';

/** Shown in responses: country, check digits and the last four characters. */
export function maskIban(input: string): string {
  const iban = normaliseIban(input);
  return `${iban.slice(0, 4)}${'*'.repeat(Math.max(0, iban.length - 8))}${iban.slice(-4)}`;
}
