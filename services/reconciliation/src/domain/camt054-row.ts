/**
 * Turns the fields collected from one camt.054 `Ntry` (and one of its `TxDtls`, if any) into a
 * row. Field keys are element paths relative to `Ntry` resp. `Ntry/NtryDtls/TxDtls`, with
 * `@Ccy` for the currency attribute of an amount.
 */
import { decimalToMinor } from './money';
import { type ParsedRow, type ParseItem, parseDate, rowError } from './rows';

export type Fields = Map<string, string[]>;

/** Entry-level paths (relative to Ntry) whose text is collected. */
export const ENTRY_PATHS = new Set([
  'NtryRef',
  'Amt',
  'CdtDbtInd',
  'Sts',
  'Sts/Cd',
  'BookgDt/Dt',
  'BookgDt/DtTm',
  'ValDt/Dt',
  'ValDt/DtTm',
  'AcctSvcrRef',
  'AddtlNtryInf',
]);

/** Transaction-level paths (relative to TxDtls) whose text is collected. */
export const TX_PATHS = new Set([
  'Amt',
  'AmtDtls/TxAmt/Amt',
  'CdtDbtInd',
  'Refs/EndToEndId',
  'Refs/AcctSvcrRef',
  'RmtInf/Strd/CdtrRefInf/Ref',
  'RmtInf/Ustrd',
]);

export const first = (fields: Fields | undefined, path: string): string | undefined =>
  fields?.get(path)?.find((value) => value !== '');

/** The amount of a transaction (its Amt, else AmtDtls/TxAmt/Amt), without the entry fallback. */
export function txAmount(tx: Fields): { text: string; currency: string | undefined } | undefined {
  for (const path of ['Amt', 'AmtDtls/TxAmt/Amt']) {
    const text = first(tx, path);
    if (text !== undefined) return { text, currency: first(tx, `${path}@Ccy`) };
  }
  return undefined;
}

function date(fields: Fields, element: 'BookgDt' | 'ValDt'): { text?: string; date?: string } {
  const day = first(fields, `${element}/Dt`);
  const time = first(fields, `${element}/DtTm`);
  const text = day ?? time;
  if (text === undefined) return {};
  // DtTm is an ISO date-time (2025-03-31T10:15:00+01:00): its date part is the booking day.
  const candidate = day ?? /^([0-9]{4}-[0-9]{2}-[0-9]{2})T/.exec(text)?.[1] ?? '';
  const parsed = parseDate(candidate);
  return parsed ? { text, date: parsed } : { text };
}

function references(entry: Fields, tx: Fields | undefined): string[] {
  const candidates = tx
    ? [
        first(tx, 'Refs/EndToEndId')?.toUpperCase() === 'NOTPROVIDED' ? undefined : first(tx, 'Refs/EndToEndId'),
        first(tx, 'RmtInf/Strd/CdtrRefInf/Ref'),
        tx
          .get('RmtInf/Ustrd')
          ?.filter((text) => text !== '')
          .join(' '),
        first(tx, 'Refs/AcctSvcrRef'),
      ]
    : [first(entry, 'AddtlNtryInf'), first(entry, 'AcctSvcrRef')];
  return candidates.filter((text): text is string => text !== undefined && text !== '');
}

/**
 * One row. `amount` is the transaction's own amount or, for an entry without (usable) TxDtls,
 * the entry's; undefined means none was found.
 */
export function buildRow(
  row: number,
  entry: Fields,
  tx: Fields | undefined,
  amount: { text: string; currency: string | undefined } | undefined,
): ParseItem {
  if (!amount) return rowError(row, 'missing_amount', 'The transaction has no amount');
  if (!amount.currency) return rowError(row, 'missing_currency', `The amount ${amount.text} has no Ccy`);
  const minor = decimalToMinor(amount.text, amount.currency);
  if (!minor.ok) return rowError(row, minor.code, minor.message);
  const indicator = first(tx, 'CdtDbtInd') ?? first(entry, 'CdtDbtInd');
  if (indicator !== 'CRDT' && indicator !== 'DBIT') {
    return rowError(row, 'missing_credit_debit', 'CdtDbtInd is neither CRDT nor DBIT');
  }
  const booking = date(entry, 'BookgDt');
  if (booking.text === undefined) return rowError(row, 'missing_booking_date', 'The entry has no BookgDt');
  if (!booking.date) return rowError(row, 'invalid_date', `The booking date "${booking.text}" is not a valid date`);
  const value = date(entry, 'ValDt');
  if (value.text !== undefined && !value.date) {
    return rowError(row, 'invalid_date', `The value date "${value.text}" is not a valid date`);
  }
  const refs = references(entry, tx);
  const entryReference = first(entry, 'NtryRef') ?? first(entry, 'AcctSvcrRef');
  const status = first(entry, 'Sts/Cd') ?? first(entry, 'Sts');
  const result: ParsedRow = {
    row,
    amount_minor: minor.minor,
    currency: amount.currency,
    credit: indicator === 'CRDT',
    booking_date: booking.date,
    references: refs,
    ...(value.date ? { value_date: value.date } : {}),
    ...(refs[0] !== undefined ? { reference: refs[0] } : {}),
    ...(entryReference !== undefined ? { entry_reference: entryReference } : {}),
    ...(status !== undefined ? { status } : {}),
  };
  return result;
}
