import { ValidationError } from './errors';

/**
 * Money is integer minor units inside the service; the API edge speaks strings of digits
 * (`{"value": "1000", "currency": "CHF"}` is 10.00 CHF).
 */
export interface Money {
  readonly minor: number;
  readonly currency: string;
}

export interface MoneyJson {
  value: string;
  currency: string;
}

const CURRENCY = /^[A-Z]{3}$/;
const DIGITS = /^(0|[1-9][0-9]*)$/;

export function money(minor: number, currency: string): Money {
  if (!Number.isSafeInteger(minor) || minor < 0) {
    throw new RangeError(`Money needs a non-negative safe integer of minor units, got ${minor}`);
  }
  if (!CURRENCY.test(currency)) {
    throw new RangeError(`Money needs an upper-case ISO 4217 code, got ${currency}`);
  }
  return { minor, currency };
}

/** Parses the API form (string of digits or a non-negative integer) into minor units. */
export function parseMinorUnits(value: unknown, property = 'amount.value'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DIGITS.test(value)) {
    const parsed = Number(value);
    if (Number.isSafeInteger(parsed)) return parsed;
  }
  throw ValidationError.field(property, 'error.validation.not_valid', 'Amounts are whole numbers of minor units');
}

export function toMoneyJson(m: Money): MoneyJson {
  return { value: String(m.minor), currency: m.currency };
}

function sameCurrency(a: Money, b: Money): void {
  if (a.currency !== b.currency) throw new RangeError(`Currency mismatch: ${a.currency} vs ${b.currency}`);
}

export function addMoney(a: Money, b: Money): Money {
  sameCurrency(a, b);
  return money(a.minor + b.minor, a.currency);
}

export function subtractMoney(a: Money, b: Money): Money {
  sameCurrency(a, b);
  return money(a.minor - b.minor, a.currency);
}

export function compareMoney(a: Money, b: Money): number {
  sameCurrency(a, b);
  return Math.sign(a.minor - b.minor);
}
