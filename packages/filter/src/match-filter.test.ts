import { describe, expect, it } from 'vitest';
import { type Filter, matchesFilter, parseFilter } from './index';

function compile(text: string): Filter {
  const result = parseFilter(text);
  if (!result.ok) throw new Error(`${text} did not parse: ${result.message} at ${result.position}`);
  return result.filter;
}

function matches(text: string, event: unknown): boolean {
  return matchesFilter(compile(text), event);
}

function paymentEvent(data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    event: {
      uuid: '6f1c0a7e-0000-4000-8000-000000000001',
      name: 'payment.succeeded',
      created: 1_700_000_000,
      object: 'payment',
      object_uuid: '6f1c0a7e-0000-4000-8000-000000000002',
      organisation_uuid: '6f1c0a7e-0000-4000-8000-000000000003',
      sequence: 7,
      data,
      ...extra,
    },
  };
}

const card2500 = paymentEvent({
  amount: { value: '2500', currency: 'CHF' },
  payment_method: 'card',
  status: 'succeeded',
  tags: ['monthly', 'web'],
  flag: true,
  note: 'it\'s "quoted"\n',
  delta: -5,
  in: 1,
  'campaign-id': 'spring',
});
const twint500 = paymentEvent(
  { amount: { value: '500', currency: 'CHF' }, payment_method: 'twint', tags: [], flag: false },
  { account_uuid: '6f1c0a7e-0000-4000-8000-000000000004' },
);

const CONTRACT_EXAMPLE = 'event.data["amount"]["value"] >= 1000 and event.data["payment_method"] == "card"';

/** Each row: filter, whether it matches card2500, whether it matches twint500. */
function table(rows: [string, boolean, boolean][]) {
  it.each(rows)('%s', (text, forCard, forTwint) => {
    expect(matches(text, card2500)).toBe(forCard);
    expect(matches(text, twint500)).toBe(forTwint);
  });
}

describe('the contract example', () => {
  it('matches a card payment of 2500 and neither a small nor a non-card payment', () => {
    expect(matches(CONTRACT_EXAMPLE, card2500)).toBe(true);
    expect(matches(CONTRACT_EXAMPLE, twint500)).toBe(false);
    const smallCard = paymentEvent({ amount: { value: '999', currency: 'CHF' }, payment_method: 'card' });
    expect(matches(CONTRACT_EXAMPLE, smallCard)).toBe(false);
    const exactCard = paymentEvent({ amount: { value: '1000', currency: 'CHF' }, payment_method: 'card' });
    expect(matches(CONTRACT_EXAMPLE, exactCard)).toBe(true);
    const numericAmount = paymentEvent({ amount: { value: 1500 }, payment_method: 'card' });
    expect(matches(CONTRACT_EXAMPLE, numericAmount)).toBe(true);
  });
});

describe('comparisons, paths and boolean operators', () => {
  table([
    ['event.data.payment_method != "card"', false, true],
    ["event.data.payment_method == 'twint'", false, true],
    ['event.data.payment_method in ["card", "sepa"]', true, false],
    ['event.data.payment_method not in ["card", "sepa"]', false, true],
    ['event.data.payment_method not\n  in ["card"]', false, true],
    ['"web" in event.data.tags', true, false],
    ['"we" in event.data.tags', false, false],
    ['"we" not in event.data.tags', true, true],
    ['"ard" in event.data.payment_method', true, false],
    ['"" in event.data.payment_method', true, true],
    ['event.data.payment_method in "card|sepa"', true, false],
    ['event.data.tags[0] == "monthly"', true, false],
    ['event.data.tags[1] == "web" && event.data.tags[2] == null', true, false],
    ['event.data.tags[001] == "web"', true, false],
    ['event.data.amount.value == event.data["amount"]["value"]', true, true],
    ['event.data["campaign-id"] == "spring"', true, false],
    ['event.data.in == 1', true, false],
    ['event.account_uuid == null', true, false],
    ['event.account_uuid != null', false, true],
    ['event.data.missing == null', true, true],
    ['event.data.missing != 0', true, true],
    ['event.data.flag', true, false],
    ['!event.data.flag', false, true],
    ['not event.data.flag', false, true],
    ['event.data.flag == true || event.data.payment_method == "twint"', true, true],
    ['event.data.flag == true && event.data.payment_method == "twint"', false, false],
    ['event.data.flag and not event.data.flag', false, false],
    ['true or false and false', true, true],
    ['(true or false) and false', false, false],
    ['not false and false', false, false],
    ['not (false and false)', true, true],
    ['!event.data.payment_method == "card"', false, true],
    ['not not event.data.flag', true, false],
    ['(((event.data.flag)))', true, false],
    ['event.data.note == "it\\\'s \\"quoted\\"\\n"', true, false],
    ["event.data.note == 'it\\'s \"quoted\"\\n'", true, false],
    ['event.data.note == "\\u0069t\\u0027s \\"quoted\\"\\u000a"', true, false],
    ['event.data.delta == -5 and event.data.delta < -4.5e0', true, false],
    ['event.created > 1.6e9 and event.created < 1.8E+9 and event.sequence == 7', true, true],
    ['event.name == "payment.succeeded"\tand\r\nevent.object == "payment"', true, true],
    ['true', true, true],
    ['false', false, false],
    ['event.data.status', false, false],
    ['1', false, false],
    ['null', false, false],
    ['event', false, false],
  ]);
});

describe('a number against a string of digits compares numerically, in both orders', () => {
  table([
    ['event.data.amount.value == 2500', true, false],
    ['2500 == event.data.amount.value', true, false],
    ['event.data.amount.value != 2500', false, true],
    ['2500 != event.data.amount.value', false, true],
    ['event.data.amount.value < 1000', false, true],
    ['1000 < event.data.amount.value', true, false],
    ['event.data.amount.value <= 500', false, true],
    ['500 <= event.data.amount.value', true, true],
    ['event.data.amount.value > 600', true, false],
    ['600 > event.data.amount.value', false, true],
    ['event.data.amount.value >= 2500', true, false],
    ['2500 >= event.data.amount.value', true, true],
    ['event.data.amount.value == 2500.0', true, false],
    ['event.data.amount.value in [2500, 1]', true, false],
    ['2500 in ["1", "2500"]', true, true],
    ['"02500.00" == 2500', true, true],
    ['"-3.50" < -3.4', true, true],
    ['"-3.50" == -3.5', true, true],
  ]);

  it('reads only -?digits(.digits)? as numeric; other strings are mixed types', () => {
    for (const text of ['1e3', ' 1000', '1000 ', '+1000', '1000.', '.5', '1_000', '0x10', '', '-', 'Infinity']) {
      const event = paymentEvent({ value: text });
      expect(matches('event.data.value == 1000 or event.data.value == 0.5 or event.data.value == 16', event)).toBe(
        false,
      );
      expect(matches('event.data.value != 1000', event)).toBe(true);
      // Ordering a non-numeric string against a number is a type error, so even its negation fails.
      expect(matches('event.data.value < 1000000', event)).toBe(false);
      expect(matches('not (event.data.value < 1000000)', event)).toBe(false);
    }
  });

  it('compares two strings as text, even when both are digits', () => {
    expect(matches('"900" > "1000"', card2500)).toBe(true);
    // 2500 < 10000, but "2500" > "10000" as text: amounts must be compared with number literals.
    expect(matches('event.data.amount.value > "10000"', card2500)).toBe(true);
    expect(matches('event.data.amount.value > 10000', card2500)).toBe(false);
    expect(matches('event.data.amount.value == "2500.0"', card2500)).toBe(false);
    expect(matches('"b" > "a" and "B" < "a" and "" < "a"', card2500)).toBe(true);
  });

  it('treats a digit string too large for a number as text', () => {
    const event = paymentEvent({ value: '9'.repeat(400) });
    expect(matches('event.data.value > 1', event)).toBe(false);
    expect(matches('not (event.data.value > 1)', event)).toBe(false);
    expect(matches('event.data.value != 1', event)).toBe(true);
  });
});

describe('mixed types do not match', () => {
  table([
    ['true == 1', false, false],
    ['true != 1', true, true],
    ['null == 0', false, false],
    ['null != 0', true, true],
    ['"true" == true', false, false],
    ['"null" == null', false, false],
    ['event.data.flag == "true"', false, false],
    ['event.data.amount == null', false, false],
    ['event.data.amount != null', true, true],
    ['event.data.tags != "monthly"', true, true],
    ['true in [1, "true"]', false, false],
    ['null in [null]', true, true],
    ['event.data.missing in [0, null]', true, true],
  ]);
});

describe('a runtime type error makes the whole filter not match', () => {
  const typeErrors = [
    'event.data.payment_method.x.y > 1',
    'event.data.missing.x == null',
    'event.data.tags.length == 2',
    'event.data.tags["0"] == "monthly"',
    'event.data.amount[0] == null',
    'event.data.amount.value.x == null',
    'event.sequence.x == null',
    'event.data.flag < true',
    'null < 1',
    'null >= null',
    'event.data.amount < 1',
    'event.data.tags == event.data.tags',
    'event.data.tags != event.data.tags',
    '[1] == [1]',
    '[1] != [2]',
    '1 in "123"',
    'null in "abc"',
    'event.data.amount in [1]',
    '[1] in [1]',
    '"x" in event.data.missing',
    '"x" not in event.data.missing',
    '"x" in 5',
    '1 in event.data.amount',
    'not event.data.missing',
    '!event.data.status',
    'true and 1',
    'false or "yes"',
    'event.data.status and true',
    'event.data.missing or true',
  ];
  it.each(typeErrors)('%s, negated or not', (text) => {
    expect(matches(text, card2500)).toBe(false);
    expect(matches(`not (${text})`, card2500)).toBe(false);
    expect(matches(`true and (${text})`, card2500)).toBe(false);
    expect(matches(`(${text}) or false`, card2500)).toBe(false);
  });

  it('short-circuits: an operand that decides and/or hides an error to its right, not to its left', () => {
    const error = 'event.data.payment_method.x > 1';
    expect(matches(`false and ${error}`, card2500)).toBe(false);
    expect(matches(`not (false and ${error})`, card2500)).toBe(true);
    expect(matches(`true or ${error}`, card2500)).toBe(true);
    expect(matches(`not (${error} and false)`, card2500)).toBe(false);
    expect(matches(`${error} or true`, card2500)).toBe(false);
    expect(matches(`true || 1`, card2500)).toBe(true);
    expect(matches(`false && 1`, card2500)).toBe(false);
    expect(matches(`!(false && 1)`, card2500)).toBe(true);
  });

  it('does not match events that are not { event: object }', () => {
    const filter = compile('event == null or event != null');
    expect(matchesFilter(filter, {})).toBe(true);
    for (const bad of [null, undefined, 'event', 1, [], [card2500.event], new Map([['event', {}]])]) {
      expect(matchesFilter(filter, bad)).toBe(false);
    }
  });
});
