/**
 * # Matching settlement rows to payments
 *
 * `matchRows` takes the rows of one parsed file (camt.054 or CSV) and yields one result per row,
 * in file order, for the organisation being reconciled (`options.organisationUuid`). Payments are
 * read through `lookup` in batches of at most `options.batchSize` (default 100) uuids.
 *
 * A row is `matched` to a payment when all of these hold, checked in this order; the first one
 * that fails makes the row `unmatched` with that `reason`:
 *
 * 1. `no_reference`: one of the row's reference texts holds a payment uuid, either hyphenated
 *    (`0b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10`, 36 characters) or as 32 hex digits without hyphens
 *    (`0b5c1e4e3c1f4f5e9a532d0e7b6f8a10`, which fits camt's 35-character EndToEndId). Upper or
 *    lower case, anywhere in the text, not directly preceded or followed by another hex digit.
 *    The texts are searched in the parser's order (camt: EndToEndId, creditor reference,
 *    unstructured remittance, bank reference; CSV: `reference`, then `description`). When no
 *    text holds one as is, a uuid wrapped across lines or words (`…-9a53-2d0e` / `7b6f8a10`) is
 *    looked for: runs of two or three consecutive words, joined without the white space.
 * 2. `payment_not_found`: a payment with that uuid exists and belongs to the organisation. When
 *    a row holds several uuids, the first that is a payment of the organisation is used. A payment
 *    of another organisation is treated exactly as a missing one.
 * 3. `debit_entry`: the row is a credit (money in); v1 reconciles incoming money only.
 * 4. `currency_mismatch`: the row's currency is the payment's (`expected.amount`).
 * 5. `amount_mismatch`: the row's amount equals the payment's amount (`expected.amount`).
 * 6. `date_out_of_range`: the booking date is on or after the payment's creation day (UTC) and at
 *    most `options.maxSettlementDays` (default 30) days after it (`expected.booking_date_from`,
 *    `expected.booking_date_to`).
 * 7. `payment_not_settled`: the payment's status is `succeeded` (`expected.status`).
 * 8. `duplicate_entry`: no earlier row of the same file was matched to the payment
 *    (`duplicate_of_row` names that row).
 *
 * A row the parser could not read is an `error` result carrying the parser's code as `reason`
 * and its `message`; so is the file-level error that ends an unreadable file.
 */
import { isRowFailure, type ParsedRow, type ParseItem } from './rows';

export { type ReconciliationSummary, type Summariser, summarise } from './summary';

export interface PaymentFacts {
  readonly uuid: string;
  readonly organisation_uuid: string;
  readonly amount_minor: number;
  readonly currency: string;
  /** Unix seconds. */
  readonly created: number;
  readonly status: string;
}

export type PaymentLookup = (paymentUuids: string[]) => Promise<Map<string, PaymentFacts>>;

export interface MatchOptions {
  readonly organisationUuid: string;
  /** Days after the payment's creation day a booking may be dated; default 30. */
  readonly maxSettlementDays?: number;
  /** Uuids per `lookup` call; default 100 (a DynamoDB BatchGetItem). */
  readonly batchSize?: number;
}

export type UnmatchedReason =
  | 'no_reference'
  | 'payment_not_found'
  | 'debit_entry'
  | 'currency_mismatch'
  | 'amount_mismatch'
  | 'date_out_of_range'
  | 'payment_not_settled'
  | 'duplicate_entry';

export interface Amount {
  /** Minor units as a string of digits, as `Money.value` in the API. */
  readonly value: string;
  readonly currency: string;
}

export interface MatchResult {
  readonly row: number;
  readonly outcome: 'matched' | 'unmatched' | 'error';
  readonly payment_uuid?: string;
  /** Unmatched: an `UnmatchedReason`; error: the parser's error code. */
  readonly reason?: string;
  /** Errors only. */
  readonly message?: string;
  /** The reference text the payment uuid was found in, else the row's first reference. */
  readonly reference?: string;
  readonly amount?: Amount;
  readonly credit?: boolean;
  readonly booking_date?: string;
  readonly expected?: {
    readonly amount?: Amount;
    readonly booking_date_from?: string;
    readonly booking_date_to?: string;
    readonly status?: string;
  };
  readonly duplicate_of_row?: number;
}

const UUID = /(?<![0-9a-f])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})(?![0-9a-f])/gi;
const MAX_CANDIDATES = 8;
const MAX_WORDS = 100;
const HEX_DIGIT = /[0-9a-f]/gi;
const DAY = 86_400;

const hyphenate = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** Runs of 2–3 consecutive words of a text joined without the white space between them. */
function* joinedWords(text: string): Generator<string> {
  if ((text.match(HEX_DIGIT)?.length ?? 0) < 32) return;
  const words = text
    .split(/\s+/)
    .filter((word) => word !== '')
    .slice(0, MAX_WORDS);
  for (let start = 0; start < words.length - 1; start++) {
    for (let end = start + 2; end <= Math.min(start + 3, words.length); end++) yield words.slice(start, end).join('');
  }
}

/** Payment uuids (lower case, hyphenated) in reference texts, in order, each with the text it came from. */
export function findPaymentUuids(texts: readonly string[]): { uuid: string; text: string }[] {
  const found = new Map<string, string>();
  const search = (variant: string, text: string) => {
    for (const [match] of variant.matchAll(UUID)) {
      const uuid = hyphenate(match.toLowerCase().replaceAll('-', ''));
      if (!found.has(uuid) && found.size < MAX_CANDIDATES) found.set(uuid, text);
    }
  };
  for (const text of texts) search(text, text);
  if (found.size === 0) {
    for (const text of texts) for (const joined of joinedWords(text)) search(joined, text);
  }
  return [...found].map(([uuid, text]) => ({ uuid, text }));
}

const dayOf = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000 / DAY;
const dateOf = (day: number): string => new Date(day * DAY * 1000).toISOString().slice(0, 10);
const amountOf = (minor: number, currency: string): Amount => ({ value: String(minor), currency });

interface Pending {
  readonly item: ParseItem;
  readonly candidates: { uuid: string; text: string }[];
}

/** Matches parsed rows to the organisation's payments (rules above); streaming, in file order. */
export async function* matchRows(
  rows: AsyncIterable<ParseItem> | Iterable<ParseItem>,
  lookup: PaymentLookup,
  options: MatchOptions,
): AsyncGenerator<MatchResult> {
  const maxDays = options.maxSettlementDays ?? 30;
  const batchSize = options.batchSize ?? 100;
  if (!Number.isInteger(maxDays) || maxDays < 0) throw new RangeError('maxSettlementDays: a whole number >= 0');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize: a whole number >= 1');
  const matchedRows = new Map<string, number>();
  let batch: Pending[] = [];
  const uuids = new Set<string>();

  async function* flush(): AsyncGenerator<MatchResult> {
    const payments = new Map<string, PaymentFacts>();
    const all = [...uuids];
    for (let start = 0; start < all.length; start += batchSize) {
      const found = await lookup(all.slice(start, start + batchSize));
      for (const facts of found.values()) {
        const uuid = facts.uuid.toLowerCase();
        if (facts.organisation_uuid === options.organisationUuid && uuids.has(uuid)) payments.set(uuid, facts);
      }
    }
    for (const pending of batch) yield decide(pending, payments);
    batch = [];
    uuids.clear();
  }

  function decide({ item, candidates }: Pending, payments: Map<string, PaymentFacts>): MatchResult {
    if (isRowFailure(item)) {
      return { row: item.row, outcome: 'error', reason: item.error.code, message: item.error.message };
    }
    const base = rowFacts(item);
    const unmatched = (reason: UnmatchedReason, extra: Partial<MatchResult> = {}): MatchResult => ({
      ...base,
      outcome: 'unmatched',
      reason,
      ...extra,
    });
    if (candidates.length === 0) return unmatched('no_reference');
    const hit = candidates.find((candidate) => payments.has(candidate.uuid));
    const payment = hit && payments.get(hit.uuid);
    if (!hit || !payment) return unmatched('payment_not_found');
    const identified = { payment_uuid: hit.uuid, reference: hit.text };
    if (!item.credit) return unmatched('debit_entry', identified);
    const expectedAmount = { amount: amountOf(payment.amount_minor, payment.currency) };
    if (item.currency !== payment.currency)
      return unmatched('currency_mismatch', { ...identified, expected: expectedAmount });
    if (item.amount_minor !== payment.amount_minor) {
      return unmatched('amount_mismatch', { ...identified, expected: expectedAmount });
    }
    const from = Math.floor(payment.created / DAY);
    const booked = dayOf(item.booking_date);
    if (!(booked >= from && booked <= from + maxDays)) {
      const expected = { booking_date_from: dateOf(from), booking_date_to: dateOf(from + maxDays) };
      return unmatched('date_out_of_range', { ...identified, expected });
    }
    if (payment.status !== 'succeeded') {
      return unmatched('payment_not_settled', { ...identified, expected: { status: 'succeeded' } });
    }
    const earlier = matchedRows.get(hit.uuid);
    if (earlier !== undefined) return unmatched('duplicate_entry', { ...identified, duplicate_of_row: earlier });
    matchedRows.set(hit.uuid, item.row);
    return { ...base, ...identified, outcome: 'matched' };
  }

  for await (const item of rows) {
    const candidates = isRowFailure(item) ? [] : findPaymentUuids(item.references);
    batch.push({ item, candidates });
    for (const { uuid } of candidates) uuids.add(uuid);
    if (uuids.size >= batchSize || batch.length >= 10 * batchSize) yield* flush();
  }
  yield* flush();
}

function rowFacts(row: ParsedRow) {
  return {
    row: row.row,
    ...(row.reference !== undefined ? { reference: row.reference } : {}),
    amount: amountOf(row.amount_minor, row.currency),
    credit: row.credit,
    booking_date: row.booking_date,
  };
}
