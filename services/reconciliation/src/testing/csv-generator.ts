/**
 * Large settlement CSV files for benchmarks and memory tests, generated as a stream of Buffers
 * (never the whole file in memory). Row i (0-based) is a credit of `syntheticAmountMinor(i)` CHF
 * for payment `syntheticPaymentUuid(i)`, booked on `bookingDate`; every third reference is
 * hyphenated, the others are 32 hex digits, and every description needs quoting.
 */
import { Readable } from 'node:stream';
import { minorToDecimal } from '../domain/money';
import { csvLine } from './csv-writer';

export interface GeneratedCsvOptions {
  readonly delimiter?: ',' | ';';
  readonly bookingDate?: string;
  /** Approximate bytes per chunk; default 64 KiB. */
  readonly chunkBytes?: number;
}

export const syntheticPaymentUuid = (index: number): string =>
  `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;

export const syntheticAmountMinor = (index: number): number => ((index * 7919) % 100_000) + 100;

export async function* generateCsv(rows: number, options: GeneratedCsvOptions = {}): AsyncGenerator<Buffer> {
  const line = { delimiter: options.delimiter ?? ',', lineEnding: '\r\n' } as const;
  const chunkBytes = options.chunkBytes ?? 65_536;
  const date = options.bookingDate ?? '2025-03-31';
  let chunk = csvLine(['date', 'amount', 'currency', 'reference', 'description', 'entry_reference'], line);
  for (let index = 0; index < rows; index++) {
    const uuid = syntheticPaymentUuid(index);
    chunk += csvLine(
      [
        date,
        minorToDecimal(syntheticAmountMinor(index), 'CHF'),
        'CHF',
        index % 3 === 0 ? uuid : uuid.replaceAll('-', ''),
        `Spende Nr. ${index}, "danke"; merci`,
        `E${index}`,
      ],
      line,
    );
    if (chunk.length >= chunkBytes) {
      yield Buffer.from(chunk, 'utf8');
      chunk = '';
    }
  }
  if (chunk.length > 0) yield Buffer.from(chunk, 'utf8');
}

/** The same as a Node Readable, as an S3 GetObject body would be. */
export const generateCsvStream = (rows: number, options: GeneratedCsvOptions = {}): Readable =>
  Readable.from(generateCsv(rows, options), { objectMode: false });
