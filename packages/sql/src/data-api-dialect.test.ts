import { describe, expect, it } from 'vitest';
import { toDataApiParameter, toNamedPlaceholders } from './data-api-dialect';

/** What reaches the RDS Data API: named placeholders and typed values, nothing rounded. */
describe('the Data API dialect', () => {
  it('names Kysely’s positional placeholders, two digits and casts included', () => {
    expect(toNamedPlaceholders('SELECT $1::jsonb, $10::bigint WHERE a = $2')).toBe(
      'SELECT :p1::jsonb, :p10::bigint WHERE a = :p2',
    );
  });

  it('sends each value with its type: strings, safe integers, booleans, nulls; other numbers as exact decimals', () => {
    expect(['x', 42, true, null, undefined, 2.5, 2 ** 60, 7n, { a: 1 }].map(toDataApiParameter)).toEqual([
      { name: 'p1', value: { stringValue: 'x' } },
      { name: 'p2', value: { longValue: 42 } },
      { name: 'p3', value: { booleanValue: true } },
      { name: 'p4', value: { isNull: true } },
      { name: 'p5', value: { isNull: true } },
      { name: 'p6', value: { stringValue: '2.5' }, typeHint: 'DECIMAL' },
      { name: 'p7', value: { stringValue: '1152921504606847000' }, typeHint: 'DECIMAL' },
      { name: 'p8', value: { longValue: 7 } },
      { name: 'p9', value: { stringValue: '{"a":1}' }, typeHint: 'JSON' },
    ]);
  });
});
