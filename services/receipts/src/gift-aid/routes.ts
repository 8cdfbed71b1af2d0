import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import { claimQuery, claimScheduleOf } from './claims';
import { createDeclarationInput, declarationResponse } from './declaration';
import { cancelDeclaration, createDeclaration, listDeclarations } from './declarations';
import { scheduleAmount } from './schedule';

const supporterParams = uuidParams('supporter_uuid');
const declarationParams = uuidParams('supporter_uuid', 'declaration_uuid');

const FORBIDDEN = { description: "No grant on the supporter's organisation" };
const NOT_FOUND = { description: 'Unknown supporter (or malformed uuid)' };
const INVALID = { description: 'Invalid input; the details name each offending property' };

/** Gift Aid (contract section 13, United Kingdom): declarations and the claim schedule. */
export const giftAidRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/supporters/{supporter_uuid}/gift-aid-declarations',
    auth: 'token',
    operationId: 'createGiftAidDeclaration',
    summary: 'Record a Gift Aid declaration of a supporter',
    description:
      'The donor declared at declared_at (not in the future) through the channel given. Send the wording as ' +
      '`text` to keep it: it is kept once per organisation and text_version and answered as text_hash (SHA-256).',
    params: supporterParams,
    body: createDeclarationInput,
    responses: {
      201: { description: 'The declaration', schema: declarationResponse },
      400: INVALID,
      403: FORBIDDEN,
      404: NOT_FOUND,
      409: { description: 'text_version is kept with other wording' },
    },
    handle: async ({ params, body, principal }) => ({
      status: 201,
      body: await createDeclaration(principal(), params.supporter_uuid, body),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/supporters/{supporter_uuid}/gift-aid-declarations',
    auth: 'token',
    operationId: 'listGiftAidDeclarations',
    summary: 'List the Gift Aid declarations of a supporter',
    description: 'Oldest declared first; cancelled ones stay listed with cancelled_at.',
    params: supporterParams,
    responses: {
      200: { description: 'Declarations', schema: z.array(declarationResponse) },
      403: FORBIDDEN,
      404: NOT_FOUND,
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await listDeclarations(principal(), params.supporter_uuid),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/supporters/{supporter_uuid}/gift-aid-declarations/{declaration_uuid}',
    auth: 'token',
    operationId: 'cancelGiftAidDeclaration',
    summary: 'Cancel a Gift Aid declaration',
    description:
      'Cancels it now (the service clock) and keeps it: donations from that UK day on are not covered. ' +
      'Cancelling again changes nothing and answers the declaration with its first cancelled_at.',
    params: declarationParams,
    responses: {
      200: { description: 'The cancelled declaration', schema: declarationResponse },
      403: FORBIDDEN,
      404: { description: 'Unknown supporter or declaration (or malformed uuid)' },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await cancelDeclaration(principal(), params.supporter_uuid, params.declaration_uuid),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/gift-aid/claims',
    auth: 'token',
    operationId: 'getGiftAidClaimSchedule',
    summary: "An organisation's Gift Aid claim schedule (HMRC's columns, CSV)",
    description:
      'The donations of the period (UK days, from and to inclusive) covered by a declaration, as HMRC’s ' +
      'Charities Online schedule: a header row, then a line per donation above 20.00 and lines of ' +
      'aggregated donations of 20.00 or less (at most 1000.00 each). Headers: X-Gift-Aid-Donations, ' +
      'X-Gift-Aid-Total, X-Gift-Aid-Left-Out (covered donations above 20.00 whose donor lacks a name, ' +
      'house or postcode). See docs/API.md, "Gift Aid".',
    query: claimQuery,
    responses: {
      200: { description: 'The schedule', media: 'text/csv' },
      400: INVALID,
      403: { description: 'No grant on the organisation' },
      409: { description: 'The organisation’s receipt settings name a country other than GB' },
    },
    handle: async ({ query, principal }) => {
      const { csv, totals } = await claimScheduleOf(principal(), query);
      return {
        status: 200,
        text: csv,
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': `attachment; filename="gift-aid-${query.from}-${query.to}.csv"`,
          'x-gift-aid-donations': String(totals.donations),
          'x-gift-aid-total': scheduleAmount(totals.total_minor),
          'x-gift-aid-left-out': String(totals.left_out),
        },
      };
    },
  }),
];
