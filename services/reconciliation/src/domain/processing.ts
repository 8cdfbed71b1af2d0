import type { Readable } from 'node:stream';
import { logger, newUuid, now } from '@svc/core';
import { newEvent } from '@svc/events';
import { findPayment } from '@svc/payments';
import { isConditionFailure, transactWrite } from '@svc/table';
import { findReport, newReportWrite, type ReportRecord, type ReportSummary } from '../repository/report-repository';
import { findSourceConfiguration } from '../repository/source-configuration-repository';
import { bucketName, parseUploadKey, REPORT_ROOT, readObject, writeObject } from '../storage/objects';
import { parseCamt054 } from './camt054';
import { parseCsv } from './csv';
import { matchRows, type PaymentFacts, summarise } from './matching';
import { reportUuidOf } from './report-id';
import { fileError, type ParseItem } from './rows';

/**
 * Processing one uploaded file (from its object-created notification): parse it by its source
 * configuration's file type, match every row against the organisation's payments, store the
 * per-row results (JSON lines, in the bucket) and the report (summary, in the table, with its
 * `reconciliation_report.created` event). The report's uuid is derived from the file, and it is
 * written only if absent, so a file notified or processed twice gives one report. A file that
 * cannot be parsed still gets its report, with the errors; the file itself is never touched.
 */
export interface ProcessedFile {
  report: ReportRecord;
  /** False when the report existed already (a repeated notification). */
  created: boolean;
}

/** Payments by uuid, read in one round trip per batch (the table client coalesces point reads). */
async function lookupPayments(uuids: readonly string[]): Promise<Map<string, PaymentFacts>> {
  const found = await Promise.all(uuids.map((uuid) => findPayment(uuid)));
  const facts = new Map<string, PaymentFacts>();
  for (const payment of found) {
    if (!payment) continue;
    facts.set(payment.uuid, {
      uuid: payment.uuid,
      organisation_uuid: payment.organisation_uuid,
      amount_minor: payment.amount_minor,
      currency: payment.currency,
      created: payment.created,
      status: payment.status,
    });
  }
  return facts;
}

/** The file's name: the key's last segment (keys arrive decoded; a `%` in a name is literal). */
function fileNameOf(key: string): string {
  return key.split('/').pop() ?? key;
}

/**
 * Payments looked up at once: the table client sends them as four BatchGetItem calls of 100 in
 * flight together, so the lookups (most of the time, bench/reconciliation.ts) overlap.
 */
export const LOOKUP_BATCH = 400;

/** Rows per results part: a page of a report reads one or two parts, never the whole file. */
export const ROWS_PER_PART = 10_000;
/** Rows per file: beyond this the file ends with a file-level error (the rest is not matched). */
export const MAX_ROWS_PER_FILE = 1_000_000;

/**
 * Processes one stored version of an uploaded file. `versionId` (versioned buckets) names the
 * exact content the notification announced, so a key written twice gives two reports; without it
 * (the local store) the ETag does, and content that changed meanwhile is left to its own
 * notification.
 */
export async function processUploadedObject(
  key: string,
  etag: string,
  versionId?: string,
): Promise<ProcessedFile | undefined> {
  const bucket = bucketName();
  const owner = parseUploadKey(key);
  if (!owner) {
    logger.warn('An object outside the upload folders was not processed', { key });
    return undefined;
  }
  const uuid = reportUuidOf(bucket, key, etag, versionId);
  const existing = await findReport(uuid);
  if (existing) return { report: existing, created: false };
  const configuration = await findSourceConfiguration(owner.configurationUuid);
  if (!configuration || configuration.organisation_uuid !== owner.organisationUuid) {
    logger.warn('An upload names no source configuration of its organisation; kept, not processed', { key });
    return undefined;
  }
  const object = await readObject(key, versionId ? { versionId } : { etag });
  if (!object) {
    // Deleted (or replaced) since it was announced: nothing to reconcile for this notification.
    logger.warn('An announced upload is gone; its notification is acknowledged', { key, etag, versionId });
    return undefined;
  }
  const rows = configuration.file_type === 'camt054' ? parseCamt054(object.body as Readable) : parseCsv(object.body);
  // Each attempt writes its own parts: a racing attempt never overwrites the winner's rows.
  const resultsPrefix = `${REPORT_ROOT}/${owner.organisationUuid}/${uuid}/${newUuid()}/`;
  const summary = summarise();
  let part: string[] = [];
  let parts = 0;
  const flush = async () => {
    await writeObject(partKey(resultsPrefix, parts), `${part.join('\n')}\n`, 'application/x-ndjson');
    parts += 1;
    part = [];
  };
  for await (const result of matchRows(capped(rows), lookupPayments, {
    organisationUuid: owner.organisationUuid,
    batchSize: LOOKUP_BATCH,
  })) {
    summary.add(result);
    part.push(JSON.stringify(result));
    if (part.length === ROWS_PER_PART) await flush();
  }
  if (part.length > 0) await flush();
  const report: ReportRecord = {
    uuid,
    organisation_uuid: owner.organisationUuid,
    source_configuration_uuid: configuration.uuid,
    file_type: configuration.file_type,
    file: { key, name: fileNameOf(key), size: object.size, etag },
    created: now(),
    summary: summary.result() as ReportSummary,
    results_key: resultsPrefix,
    results_parts: parts,
    event_sequence: 1,
  };
  const event = newEvent({
    name: 'svc.reconciliation.reconciliation_report.created',
    object: 'reconciliation_report',
    object_uuid: uuid,
    organisation_uuid: owner.organisationUuid,
    sequence: 1,
  });
  const retentionDays = Number(process.env.SVC_RECONCILIATION_RETENTION_DAYS ?? 0);
  const expiresAt = retentionDays > 0 ? report.created + retentionDays * 86_400 : undefined;
  try {
    await transactWrite([{ item: newReportWrite(report, [event], expiresAt) }]);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Another worker processed the same file meanwhile: its report stands.
    const winner = await findReport(uuid);
    if (winner) return { report: winner, created: false };
    throw error;
  }
  return { report, created: true };
}

export function partKey(prefix: string, index: number): string {
  return `${prefix}part-${String(index).padStart(5, '0')}.jsonl`;
}

/** The parsed rows, ending with a file-level error past MAX_ROWS_PER_FILE. */
async function* capped(rows: AsyncIterable<ParseItem>): AsyncGenerator<ParseItem> {
  let count = 0;
  for await (const row of rows) {
    if (count === MAX_ROWS_PER_FILE) {
      yield fileError(
        row.row,
        'too_many_rows',
        `The file has more than ${MAX_ROWS_PER_FILE} rows; split it and upload the rest again`,
      );
      return;
    }
    count += 1;
    yield row;
  }
}
