/**
 * A Swiss e-banking style settlement CSV (UTF-8 with BOM, `;`, CRLF, `DD.MM.YYYY`, `'` grouping,
 * an extra `Saldo` column the format ignores), with the payments to be reconciled filled in:
 *
 * - line 2: `first`, its 32-hex uuid as the reference, amount grouped (`1'250.00`);
 * - line 3: `second`, QR reference in `reference`, hyphenated uuid in `description`;
 * - line 4: a bank fee (debit, no uuid);
 * - line 5: `third`, hyphenated uuid as the reference, a description spanning two lines and
 *   holding `;` and quotes;
 * - line 7: the same transfer as line 2 once more (a duplicate).
 */
import { minorToDecimal } from '../domain/money';
import type { SamplePayment } from './camt054-sample';
import { writeCsv } from './csv-writer';

export interface CsvSampleInput {
  readonly first: SamplePayment;
  readonly second: SamplePayment;
  readonly third: SamplePayment;
  /** YYYY-MM-DD. */
  readonly bookingDate: string;
}

const swissDate = (date: string): string => date.split('-').reverse().join('.');

/** `1234567.5` → `1'234'567.50`. */
export function groupThousands(decimal: string, separator = "'"): string {
  const [whole = '', fraction] = decimal.split('.');
  const grouped = whole.replace(/\B(?=([0-9]{3})+(?![0-9]))/g, separator);
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

const amount = (payment: SamplePayment): [string, string] => {
  const currency = payment.currency ?? 'CHF';
  return [groupThousands(minorToDecimal(payment.amount_minor, currency)), currency];
};

export function csvSample(input: CsvSampleInput): string {
  const { first, second, third, bookingDate } = input;
  const day = swissDate(bookingDate);
  return writeCsv(
    ['Date', 'Value Date', 'Amount', 'Currency', 'Reference', 'Description', 'Entry Reference', 'Saldo'],
    [
      [
        day,
        day,
        ...amount(first),
        first.uuid.replaceAll('-', ''),
        'Gutschrift Anna Muster',
        'ZV20250331/000001',
        "10'000.00",
      ],
      [day, day, ...amount(second), '210000000003139471430009017', `Spende ${second.uuid}`, 'ZV20250331/000002', ''],
      [day, day, '-12.50', 'CHF', '', 'Kontoführungsgebühr', 'ZV20250331/000003', ''],
      [day, day, ...amount(third), third.uuid, 'Spende "Winter"; danke\r\nvielmals', 'ZV20250331/000004', ''],
      [day, day, ...amount(first), first.uuid.replaceAll('-', ''), 'Gutschrift Anna Muster', 'ZV20250331/000005', ''],
    ],
    { delimiter: ';', bom: true },
  );
}
