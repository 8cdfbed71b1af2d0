import { createInterface } from 'node:readline';
import { assertWholeOrganisationGrant, NotFoundError, type Principal } from '@svc/core';
import { findReport, type ReportRecord, reportsOf } from '../repository/report-repository';
import { readObject } from '../storage/objects';

/** The report as the API and its event show it; rows come apart, page by page. */
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

export async function listReports(
  principal: Promise<Principal>,
  organisationUuid: string,
  configurationUuid: string | undefined,
): Promise<ReportRecord[]> {
  assertWholeOrganisationGrant(await principal, organisationUuid);
  const reports = await reportsOf(organisationUuid);
  return configurationUuid ? reports.filter((r) => r.source_configuration_uuid === configurationUuid) : reports;
}

export async function readReport(principal: Promise<Principal>, uuid: string): Promise<ReportRecord> {
  const [caller, report] = await Promise.all([principal, findReport(uuid)]);
  if (!report) throw new NotFoundError('Reconciliation report not found');
  assertWholeOrganisationGrant(caller, report.organisation_uuid);
  return report;
}

/** Rows `from` … `from + size - 1` of a report's results (streamed, never the whole file in memory). */
export async function reportRows(report: ReportRecord, from: number, size: number): Promise<unknown[]> {
  if (size === 0 || from >= report.summary.rows) return [];
  const { body } = await readObject(report.results_key);
  const lines = createInterface({ input: body, crlfDelay: Number.POSITIVE_INFINITY });
  const rows: unknown[] = [];
  let index = 0;
  try {
    for await (const line of lines) {
      if (line === '') continue;
      if (index >= from) rows.push(JSON.parse(line));
      index += 1;
      if (rows.length >= size) break;
    }
  } finally {
    lines.close();
    body.destroy();
  }
  return rows;
}
