import { definedFields, now } from '@svc/core';
import { EVENTS_ATTRIBUTE, type StoredEvent } from '@svc/events';
import { byUuid, defineEntity, getItem, key, queryAll, type TransactItem, TTL_ATTRIBUTE, timeKey } from '@svc/table';
import * as z from 'zod';

/**
 * Reconciliation reports: one per uploaded file. The summary lives in the table, the per-row
 * results (up to hundreds of thousands) as JSON lines in the bucket under `reports/`.
 * Described by `REPORT` below (docs/access-patterns.md).
 *
 * A report's uuid is derived from the file (bucket, key and ETag), and it is written only if
 * absent: a file processed twice (S3 notifies at least once) gives one report.
 */
const amountSchema = z.object({ value: z.string(), currency: z.string() });

export const reportSummarySchema = z.object({
  rows: z.number().int(),
  matched: z.number().int(),
  unmatched: z.number().int(),
  errors: z.number().int(),
  matched_amounts: z.array(amountSchema),
});
export type ReportSummary = z.infer<typeof reportSummarySchema>;

export const reportRecordSchema = z.object({
  uuid: z.string(),
  organisation_uuid: z.string(),
  source_configuration_uuid: z.string(),
  file_type: z.enum(['camt054', 'csv']),
  file: z.object({ key: z.string(), name: z.string(), size: z.number().int(), etag: z.string() }),
  created: z.number().int(),
  summary: reportSummarySchema,
  /** The folder of this report's results: `part-00000.jsonl`, … of ROWS_PER_PART rows each. */
  results_key: z.string(),
  results_parts: z.number().int().default(1),
  event_sequence: z.number().int(),
});
export type ReportRecord = z.infer<typeof reportRecordSchema>;

export const REPORT = defineEntity<ReportRecord, string>({
  name: 'reconciliation_report',
  summary: 'The summary of one reconciled file (its rows’ results are in the bucket), kept for the stage’s retention.',
  prefix: 'RECON_REPORT',
  ...byUuid(),
  sort: 'RECON_REPORT',
  byKey: 'report by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'reports of an organisation, newest first',
      shown: 'gsi1pk = ORG#<organisation uuid>#RECON_REPORTS, gsi1sk = <created>#<uuid>',
      keys: (report) => ({
        partition: reportsPartition(report.organisation_uuid),
        sort: key(timeKey(report.created), report.uuid),
      }),
    },
  ],
  parse: (item) => reportRecordSchema.parse(item),
});

const reportsPartition = (organisationUuid: string) => key('ORG', organisationUuid, 'RECON_REPORTS');

/**
 * The report, written only if absent. `expiresAt` (the stage's retention, as the bucket's
 * lifecycle removes the file and its results) sets its TTL.
 */
export function newReportWrite(report: ReportRecord, events: StoredEvent[], expiresAt?: number): TransactItem {
  return {
    Put: {
      Item: {
        ...REPORT.item(report),
        [EVENTS_ATTRIBUTE]: events,
        ...definedFields({ [TTL_ATTRIBUTE]: expiresAt }),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** A report, unless its retention has passed (DynamoDB removes expired items up to days late). */
export async function findReport(uuid: string, at = now()): Promise<ReportRecord | undefined> {
  const item = await getItem(REPORT.key(uuid));
  if (!item || (typeof item[TTL_ATTRIBUTE] === 'number' && item[TTL_ATTRIBUTE] <= at)) return undefined;
  return REPORT.fromItem(item);
}

/** The newest reports of an organisation (at most `limit`), expired ones left out. */
export async function reportsOf(organisationUuid: string, limit: number, at = now()): Promise<ReportRecord[]> {
  const items = await queryAll({
    index: 'gsi1',
    partition: reportsPartition(organisationUuid),
    descending: true,
    limit,
  });
  return items
    .filter((item) => !(typeof item[TTL_ATTRIBUTE] === 'number' && item[TTL_ATTRIBUTE] <= at))
    .map(REPORT.fromItem);
}
