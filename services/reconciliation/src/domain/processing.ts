import type { Readable } from 'node:stream';
import { logger, now } from '@svc/core';
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

function fileNameOf(key: string): string {
  return decodeURIComponent(key.split('/').pop() ?? key);
}

export async function processUploadedObject(key: string, etag: string): Promise<ProcessedFile | undefined> {
  const bucket = bucketName();
  const owner = parseUploadKey(key);
  if (!owner) {
    logger.warn('An object outside the upload folders was not processed', { key });
    return undefined;
  }
  const uuid = reportUuidOf(bucket, key, etag);
  const existing = await findReport(uuid);
  if (existing) return { report: existing, created: false };
  const configuration = await findSourceConfiguration(owner.configurationUuid);
  if (!configuration || configuration.organisation_uuid !== owner.organisationUuid) {
    logger.warn('An upload names no source configuration of its organisation; kept, not processed', { key });
    return undefined;
  }
  const object = await readObject(key);
  const rows = configuration.file_type === 'camt054' ? parseCamt054(object.body as Readable) : parseCsv(object.body);
  const lines: string[] = [];
  const summary = summarise();
  for await (const result of matchRows(rows, lookupPayments, { organisationUuid: owner.organisationUuid })) {
    summary.add(result);
    lines.push(JSON.stringify(result));
  }
  const resultsKey = `${REPORT_ROOT}/${owner.organisationUuid}/${uuid}.jsonl`;
  await writeObject(resultsKey, lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'application/x-ndjson');
  const report: ReportRecord = {
    uuid,
    organisation_uuid: owner.organisationUuid,
    source_configuration_uuid: configuration.uuid,
    file_type: configuration.file_type,
    file: { key, name: fileNameOf(key), size: object.size, etag },
    created: now(),
    summary: summary.result() as ReportSummary,
    results_key: resultsKey,
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
