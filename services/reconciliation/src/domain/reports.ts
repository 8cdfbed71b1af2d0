import { createInterface } from 'node:readline';
import {
  type Assert,
  assertWholeOrganisationGrant,
  type Conforms,
  deferred,
  NotFoundError,
  onWholeOrganisation,
  type Principal,
  readFor,
} from '@svc/core';
import * as z from 'zod';
import { findReport, type ReportRecord, reportsOf } from '../repository/report-repository';
import { readObject } from '../storage/objects';
import { partKey, ROWS_PER_PART } from './processing';

/** The report as the API and its event show it (its schema and shape); rows come apart, page by page. */
export const reportResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    source_configuration_uuid: z.string(),
    file_type: z.enum(['camt054', 'csv']),
    file: z.object({ name: z.string(), size: z.number().int() }),
    created: z.number().int(),
    summary: z.object({
      rows: z.number().int(),
      matched: z.number().int(),
      unmatched: z.number().int(),
      errors: z.number().int(),
      matched_amounts: z.array(z.object({ value: z.string(), currency: z.string() })),
    }),
  }),
);

type _Report = Assert<Conforms<ReturnType<typeof reportShape>, z.output<typeof reportResponse>>>;

export function reportShape(report: ReportRecord) {
  return {
    uuid: report.uuid,
    organisation_uuid: report.organisation_uuid,
    source_configuration_uuid: report.source_configuration_uuid,
    file_type: report.file_type,
    file: { name: report.file.name, size: report.file.size },
    created: report.created,
    summary: report.summary,
  };
}

/** List Reports answers the newest this many. */
export const REPORT_LIST_LIMIT = 500;

export async function listReports(
  principal: Promise<Principal>,
  organisationUuid: string,
  configurationUuid: string | undefined,
): Promise<ReportRecord[]> {
  assertWholeOrganisationGrant(await principal, organisationUuid);
  const reports = await reportsOf(organisationUuid, REPORT_LIST_LIMIT);
  return configurationUuid ? reports.filter((r) => r.source_configuration_uuid === configurationUuid) : reports;
}

export async function readReport(principal: Promise<Principal>, uuid: string): Promise<ReportRecord> {
  return readFor(principal, findReport(uuid), 'Reconciliation report not found', onWholeOrganisation);
}

/** The lines of one results part, streamed. */
async function* partLines(key: string): AsyncGenerator<string> {
  const object = await readObject(key);
  if (!object) throw new NotFoundError('The rows of this report are no longer kept');
  const lines = createInterface({ input: object.body, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) if (line !== '') yield line;
  } finally {
    lines.close();
    object.body.destroy();
  }
}

/**
 * Rows `from` … `from + size - 1` of a report: only the parts that hold them are read
 * (ROWS_PER_PART rows each), so a late page costs as little as the first.
 */
export async function reportRows(report: ReportRecord, from: number, size: number): Promise<unknown[]> {
  if (size === 0 || from >= report.summary.rows) return [];
  const rows: unknown[] = [];
  for (let part = Math.floor(from / ROWS_PER_PART); part < report.results_parts && rows.length < size; part++) {
    let index = part * ROWS_PER_PART;
    for await (const line of partLines(partKey(report.results_key, part))) {
      if (index >= from) rows.push(JSON.parse(line));
      index += 1;
      if (rows.length >= size) break;
    }
  }
  return rows;
}
