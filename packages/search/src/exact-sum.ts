import { isNumericString } from './numeric';

/**
 * Sums numbers and numeric strings without rounding. Amounts are integer minor units, and a sum
 * over many payments can pass 2^53, where doubles start dropping units; so integers accumulate in
 * a double only while the total stays a safe integer and spill into a BigInt after that. Decimals
 * (`"12.50"`, or a number such as 0.1 taken as the decimal it prints as) accumulate as a scaled
 * BigInt, so 0.1 + 0.2 is 0.3.
 */
export class ExactSum {
  private small = 0;
  private large = 0n;
  /** The decimal part of the sum is `scaled / 10^scale`. */
  private scaled = 0n;
  private scale = 0;

  /** Adds a number or numeric string; anything else is ignored. */
  add(value: unknown): void {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) this.addSafeInteger(value);
      else if (Number.isFinite(value)) this.addDecimal(String(value));
    } else if (typeof value === 'string' && isNumericString(value)) {
      // Fifteen digits or fewer always fit a safe integer.
      if (value.length <= 15 && !value.includes('.')) this.addSafeInteger(Number(value));
      else this.addDecimal(value);
    }
  }

  /** Adds an exact decimal total however large (a database's sum); not a number is ignored. */
  addTotal(text: string): void {
    if (/^-?[0-9]+(\.[0-9]+)?$/.test(text)) this.addDecimal(text);
  }

  /**
   * The sum, as a number when that number prints (in JSON, as `String` does) as exactly the sum's
   * digits, otherwise as the exact decimal string, so no reader of a response ever sees a
   * rounded total. (A large integer such as 1152921504606847000 is held by a double whose binary
   * value differs, but it prints, and so reaches the client, as those very digits.)
   */
  value(): number | string {
    if (this.large === 0n && this.scaled === 0n) return this.small;
    const exact = formatDecimal(
      (BigInt(this.small) + this.large) * 10n ** BigInt(this.scale) + this.scaled,
      this.scale,
    );
    const number = Number(exact);
    return String(number) === exact ? number : exact;
  }

  private addSafeInteger(value: number): void {
    const next = this.small + value;
    // Both operands are safe integers, so a safe result is exact; otherwise finish in BigInt.
    if (Number.isSafeInteger(next)) {
      this.small = next;
    } else {
      this.large += BigInt(this.small) + BigInt(value);
      this.small = 0;
    }
  }

  /** Takes `-12.50`, `3` or a double's own form such as `1.5e-7` or `1e+21`. */
  private addDecimal(text: string): void {
    const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([-+][0-9]+))?$/.exec(text);
    if (!match) return;
    const [, sign = '', whole = '0', fraction = '', exponentText = '0'] = match;
    const exponent = Number(exponentText);
    let digits = BigInt(whole + fraction);
    let scale = fraction.length - exponent;
    if (scale < 0) {
      digits *= 10n ** BigInt(-scale);
      scale = 0;
    }
    if (sign === '-') digits = -digits;
    if (scale > this.scale) {
      this.scaled *= 10n ** BigInt(scale - this.scale);
      this.scale = scale;
    } else {
      digits *= 10n ** BigInt(this.scale - scale);
    }
    this.scaled += digits;
  }
}

/** `scaled / 10^scale` in plain decimal notation, without trailing fraction zeros. */
function formatDecimal(scaled: bigint, scale: number): string {
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = fraction.length > 0 ? `${whole}.${fraction}` : whole;
  return negative ? `-${text}` : text;
}
