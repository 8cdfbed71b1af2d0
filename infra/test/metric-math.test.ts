import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RATE_EXPRESSION, RATE_MINIMUM, REFUSAL_REASONS, REFUSALS_EXPRESSION } from '../constructs/operations-alarms';

/**
 * A small evaluator of the CloudWatch metric math the alarms use (numbers, metric ids, `+ - * /`,
 * `>=`, `IF(c, a, b)`, `FILL(m, v)`), over series where a missing datapoint is null. As in
 * CloudWatch, arithmetic with a missing value is missing, and a datapoint the expression leaves
 * missing is no data for the alarm: the alarms' expressions are held to firing on what they see.
 */
type Series = Array<number | null>;

function evaluate(expression: string, inputs: Record<string, Series>, length: number): Series {
  const tokens = expression.match(/\d+(?:\.\d+)?|[A-Za-z_]\w*|>=|[-+*/(),]/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (expected !== undefined && token !== expected) throw new Error(`Expected ${expected}, got ${token}`);
    return token as string;
  };
  const map = (a: Series, b: Series, f: (x: number, y: number) => number): Series =>
    a.map((x, i) => (x === null || b[i] === null ? null : f(x, b[i] as number)));
  const constant = (value: number): Series => Array.from({ length }, () => value);
  function primary(): Series {
    const token = take();
    if (/^\d/.test(token)) return constant(Number(token));
    if (token === '(') {
      const inner = comparison();
      take(')');
      return inner;
    }
    if (token === 'FILL') {
      take('(');
      const series = comparison();
      take(',');
      const value = comparison();
      take(')');
      return series.map((x, i) => x ?? value[i] ?? null);
    }
    if (token === 'IF') {
      take('(');
      const condition = comparison();
      take(',');
      const then = comparison();
      take(',');
      const otherwise = comparison();
      take(')');
      return condition.map((c, i) => (c === null ? null : c !== 0 ? (then[i] ?? null) : (otherwise[i] ?? null)));
    }
    const series = inputs[token];
    if (!series) throw new Error(`Unknown metric ${token}`);
    return series;
  }
  function product(): Series {
    let left = primary();
    while (peek() === '*' || peek() === '/') {
      const op = take();
      const right = primary();
      left = map(left, right, (x, y) => (op === '*' ? x * y : x / y));
    }
    return left;
  }
  function sum(): Series {
    let left = product();
    while (peek() === '+' || peek() === '-') {
      const op = take();
      const right = product();
      left = map(left, right, (x, y) => (op === '+' ? x + y : x - y));
    }
    return left;
  }
  function comparison(): Series {
    const left = sum();
    if (peek() !== '>=') return left;
    take();
    return map(left, sum(), (x, y) => (x >= y ? 1 : 0));
  }
  const result = comparison();
  if (at !== tokens.length) throw new Error(`Unparsed: ${tokens.slice(at).join(' ')}`);
  return result;
}

describe('the failing-share alarms’ metric math', () => {
  it('fires in a total outage, when only failures have data', () => {
    expect(evaluate(RATE_EXPRESSION, { f: [RATE_MINIMUM + 5], o: [null] }, 1)).toEqual([1]);
    // What the expression was before: no data in a total outage, so the alarm never fired.
    expect(evaluate('IF((f + o) >= 20, f / (f + o), 0)', { f: [25], o: [null] }, 1)).toEqual([null]);
  });

  it('is quiet with no traffic at all, and below the minimum number of outcomes', () => {
    expect(evaluate(RATE_EXPRESSION, { f: [null], o: [null] }, 1)).toEqual([0]);
    expect(evaluate(RATE_EXPRESSION, { f: [RATE_MINIMUM - 1], o: [null] }, 1)).toEqual([0]);
  });

  it('gives the failing share wherever enough happened, whatever data is missing (property)', () => {
    const point = fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null });
    fc.assert(
      fc.property(fc.array(fc.tuple(point, point), { minLength: 1, maxLength: 12 }), (pairs) => {
        const f = pairs.map(([x]) => x);
        const o = pairs.map(([, y]) => y);
        const result = evaluate(RATE_EXPRESSION, { f, o }, pairs.length);
        result.forEach((value, i) => {
          const failed = f[i] ?? 0;
          const total = failed + (o[i] ?? 0);
          expect(value).toBe(total >= RATE_MINIMUM ? failed / total : 0);
        });
      }),
    );
  });
});

describe('the refused-callbacks alarms’ metric math (issue 46)', () => {
  const ids = Object.keys(REFUSAL_REASONS);
  const none = () => Object.fromEntries(ids.map((id) => [id, [null] as Series]));

  it('fires on one reason alone, the others without data', () => {
    for (const id of ids) expect(evaluate(REFUSALS_EXPRESSION, { ...none(), [id]: [3] }, 1), id).toEqual([3]);
    // A plain sum would be no data whenever a reason had none: never firing.
    expect(evaluate(ids.join(' + '), { ...none(), s: [3] }, 1)).toEqual([null]);
  });

  it('is 0 with no refusals at all, and sums every reason (property)', () => {
    expect(evaluate(REFUSALS_EXPRESSION, none(), 1)).toEqual([0]);
    const point = fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null });
    fc.assert(
      fc.property(fc.array(fc.tuple(point, point, point), { minLength: 1, maxLength: 12 }), (rows) => {
        const inputs = Object.fromEntries(ids.map((id, column) => [id, rows.map((row) => row[column] ?? null)]));
        expect(evaluate(REFUSALS_EXPRESSION, inputs, rows.length)).toEqual(
          rows.map((row) => row.reduce<number>((sum, value) => sum + (value ?? 0), 0)),
        );
      }),
    );
  });
});
