import { deferred } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParam, uuidParams } from '@svc/http';
import * as z from 'zod';
import { batchInput, getBatch, startBatch } from '../domain/batches';
import { receiptPdf } from '../domain/pdf';
import { getReceipt, listReceipts, MAX_RECEIPTS_PAGE, voidReceipt } from '../domain/receipts';
import { getReceiptSettings, putReceiptSettings, receiptSettingsInput } from '../domain/settings';
import { batchResponse, batchShape, receiptResponse, receiptShape } from '../domain/shapes';
import { receiptSettingsRecordSchema } from '../repository/receipt-repository';

const settingsResponse = deferred(() =>
  receiptSettingsRecordSchema.omit({ organisation_uuid: true, version: true, updated: true }),
);

const INVALID = { description: 'Invalid input; the details name each offending property' };
const WHOLE = { description: 'No grant on the whole organisation' };
const organisationParams = uuidParams('organisation_uuid');
const receiptParams = uuidParams('receipt_uuid');

const listQuery = z.object({
  organisation_uuid: uuidParam.optional().meta({ description: 'With year: the organisation’s receipts of that year' }),
  year: z
    .string()
    .regex(/^\d{4}$/, 'A year')
    .transform(Number)
    .optional(),
  supporter_uuid: uuidParam.optional().meta({ description: 'A supporter’s receipts (every year, or `year`)' }),
  after: z
    .string()
    .regex(/^\d{4}-\d{6,}$/, 'A receipt number, <year>-<sequence>')
    .optional()
    .meta({ description: 'With organisation_uuid and year: the receipts after this number (the next page)' }),
  size: z
    .string()
    .regex(/^\d{1,4}$/, 'A whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_RECEIPTS_PAGE))
    .optional()
    .meta({
      description: `With organisation_uuid and year: at most this many (default and most ${MAX_RECEIPTS_PAGE})`,
    }),
});

const voidInput = z.strictObject({ reason: z.string().trim().min(1).max(200).optional() }).optional();

export const receiptRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}/receipt-settings',
    auth: 'token',
    operationId: 'getReceiptSettings',
    summary: 'What the organisation’s yearly receipts say, and from which total on they are issued',
    params: organisationParams,
    responses: {
      200: { description: 'Receipt settings', schema: settingsResponse },
      403: { description: 'No grant on the organisation' },
      404: { description: 'Unknown organisation, or no receipt settings yet' },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await getReceiptSettings(principal(), params.organisation_uuid),
    }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/organisations/{organisation_uuid}/receipt-settings',
    auth: 'token',
    operationId: 'putReceiptSettings',
    summary: 'Replace the organisation’s receipt settings (every field)',
    description: 'Needs a grant on the whole organisation. `min_total` is in minor units of the country’s currency.',
    params: organisationParams,
    body: receiptSettingsInput,
    responses: {
      200: { description: 'Receipt settings', schema: settingsResponse },
      400: INVALID,
      403: WHOLE,
      404: { description: 'Unknown organisation' },
    },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: await putReceiptSettings(principal(), params.organisation_uuid, body),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/receipt-batches',
    auth: 'token',
    operationId: 'createReceiptBatch',
    summary: 'Issue the organisation’s receipts of a year that is over (in the background)',
    description:
      'One receipt per supporter whose gifts of the year come to at least `min_total`; supporters who already hold a valid receipt of the year are left out, so a batch may be run again.',
    body: batchInput,
    responses: {
      202: { description: 'The batch, queued', schema: batchResponse },
      400: INVALID,
      403: WHOLE,
      404: { description: 'Unknown organisation' },
      409: { description: 'The organisation has no receipt settings (error.receipts.no_settings)' },
    },
    handle: async ({ body, principal }) => ({ status: 202, body: batchShape(await startBatch(principal(), body)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/receipt-batches/{batch_uuid}',
    auth: 'token',
    operationId: 'getReceiptBatch',
    summary: 'A receipt batch: its status and counts',
    params: uuidParams('batch_uuid'),
    responses: {
      200: { description: 'The batch', schema: batchResponse },
      403: WHOLE,
      404: { description: 'Unknown batch' },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: batchShape(await getBatch(principal(), params.batch_uuid)),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/receipts',
    auth: 'token',
    operationId: 'listReceipts',
    summary: 'An organisation’s receipts of a year, or a supporter’s; voided ones included',
    description: `An organisation’s year comes in pages of at most ${MAX_RECEIPTS_PAGE} in number order: ask for the next with \`after\` set to the last number of the page.`,
    query: listQuery,
    responses: {
      200: { description: 'Receipts in number order', schema: z.array(receiptResponse) },
      400: INVALID,
      403: WHOLE,
    },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listReceipts(principal(), query)).map(receiptShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/receipts/{receipt_uuid}',
    auth: 'token',
    operationId: 'getReceipt',
    summary: 'A receipt',
    params: receiptParams,
    responses: {
      200: { description: 'The receipt', schema: receiptResponse },
      403: WHOLE,
      404: { description: 'Unknown receipt' },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: receiptShape(await getReceipt(principal(), params.receipt_uuid)),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/receipts/{receipt_uuid}/pdf',
    auth: 'token',
    operationId: 'getReceiptPdf',
    summary: 'The receipt as the donor’s tax office takes it (PDF)',
    description: 'A voided receipt’s document says it is void.',
    params: receiptParams,
    responses: {
      200: { description: 'The document', media: 'application/pdf' },
      403: WHOLE,
      404: { description: 'Unknown receipt' },
    },
    handle: async ({ params, principal }) => {
      const { bytes, filename } = await receiptPdf(principal(), params.receipt_uuid);
      return {
        status: 200,
        binary: { contentType: 'application/pdf', bytes },
        headers: { 'content-disposition': `inline; filename="${filename}"` },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/receipts/{receipt_uuid}/void',
    auth: 'token',
    operationId: 'voidReceipt',
    summary: 'Void a receipt (it stays listed); the next batch of its year issues the supporter a new one',
    params: receiptParams,
    body: voidInput,
    responses: {
      200: { description: 'The voided receipt', schema: receiptResponse },
      400: INVALID,
      403: WHOLE,
      404: { description: 'Unknown receipt' },
    },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: receiptShape(await voidReceipt(principal(), params.receipt_uuid, body?.reason)),
    }),
  }),
];
