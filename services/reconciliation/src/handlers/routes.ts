import { deferred, uuidSchema } from '@svc/core';
import { type AnyRoute, defineRoute, type MultipartBody, uuidParams } from '@svc/http';
import * as z from 'zod';
import { BLUEPRINT_MAX_BYTES, BLUEPRINT_SUNSET, executeBlueprint } from '../domain/blueprint';
import { listReports, readReport, reportResponse, reportRows, reportShape } from '../domain/reports';
import { uploadParameters } from '../domain/upload-parameters';

const MAX_ROWS_PAGE = 1000;

export const reconciliationRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/reconciliation/source-configurations/{source_configuration_uuid}/upload-parameters',
    auth: 'token',
    operationId: 'getReconciliationUploadParameters',
    summary: 'A presigned POST for uploading one file of this source configuration straight to object storage',
    params: uuidParams('source_configuration_uuid'),
    responses: {
      200: {
        description: 'Upload parameters: post `inputs` as form fields, then the file, to `attributes.action`',
        schema: deferred(() =>
          z.object({
            inputs: z.record(z.string(), z.string()),
            attributes: z.object({
              action: z.string(),
              method: z.literal('POST'),
              enctype: z.literal('multipart/form-data'),
            }),
            expires: z.number().int(),
          }),
        ),
      },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await uploadParameters(principal(), params.source_configuration_uuid),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/reconciliation/blueprints/{blueprint_uuid}/execute',
    auth: 'token',
    operationId: 'executeReconciliationBlueprint',
    summary: 'Deprecated: upload files (multipart, `filename[]`) to be reconciled; use the upload parameters instead',
    description: `Deprecated; answered with \`Deprecation: true\` and \`Sunset: ${BLUEPRINT_SUNSET}\`. At most 4 MiB per request.`,
    params: uuidParams('blueprint_uuid'),
    body: z.custom<MultipartBody>((value) => typeof value === 'object' && value !== null && 'bytes' in value, {
      message: 'Send the files as multipart/form-data',
    }),
    accepts: ['multipart'],
    maxBodyBytes: BLUEPRINT_MAX_BYTES,
    responses: {
      202: {
        description: 'The files are stored; each is processed into a report',
        schema: deferred(() =>
          z.object({
            files: z.array(
              z.object({ key: z.string(), name: z.string(), size: z.number().int(), report_uuid: z.string() }),
            ),
          }),
        ),
      },
    },
    handle: async ({ params, body, principal }) => ({
      status: 202,
      headers: {
        deprecation: 'true',
        sunset: BLUEPRINT_SUNSET,
        link: '</docs#operation/getReconciliationUploadParameters>; rel="successor-version"',
      },
      body: { files: await executeBlueprint(principal(), params.blueprint_uuid, body.form) },
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/reconciliation/reports',
    auth: 'token',
    operationId: 'listReconciliationReports',
    summary: "List an organisation's reconciliation reports, newest first",
    query: z.object({ organisation_uuid: uuidSchema, source_configuration_uuid: uuidSchema.optional() }),
    responses: { 200: { description: 'Reports (summaries)', schema: z.array(reportResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listReports(principal(), query.organisation_uuid, query.source_configuration_uuid)).map(reportShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/reconciliation/reports/{report_uuid}',
    auth: 'token',
    operationId: 'getReconciliationReport',
    summary: 'A reconciliation report with a page of its rows (`from`, `size` ≤ 1000)',
    params: uuidParams('report_uuid'),
    query: z.object({
      from: z.coerce.number().int().min(0).default(0),
      size: z.coerce.number().int().min(0).max(MAX_ROWS_PAGE).default(100),
    }),
    responses: {
      200: {
        description: 'Report with `rows`',
        schema: deferred(() =>
          reportResponse.unwrap().extend({
            rows: z
              .array(z.record(z.string(), z.unknown()))
              .describe('Result rows, each the row as read and how it matched'),
          }),
        ),
      },
    },
    handle: async ({ params, query, principal }) => {
      const report = await readReport(principal(), params.report_uuid);
      return { status: 200, body: { ...reportShape(report), rows: await reportRows(report, query.from, query.size) } };
    },
  }),
];
