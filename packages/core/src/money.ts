/**
 * Money is integer minor units inside the service; the API edge speaks strings of digits
 * (`{"value": "1000", "currency": "CHF"}` is 10.00 CHF), parsed and shaped by each domain's
 * schemas.
 */
export interface Money {
  readonly minor: number;
  readonly currency: string;
}

const CURRENCY = /^[A-Z]{3}$/;

/** Money a provider is asked to move: whole non-negative minor units and an ISO 4217 code. */
export function money(minor: number, currency: string): Money {
  if (!Number.isSafeInteger(minor) || minor < 0) {
    throw new RangeError(`Money needs a non-negative safe integer of minor units, got ${minor}`);
  }
  if (!CURRENCY.test(currency)) {
    throw new RangeError(`Money needs an upper-case ISO 4217 code, got ${currency}`);
  }
  return { minor, currency };
}
