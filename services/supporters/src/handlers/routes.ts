import { type AnyRoute, defineRoute, uuidParam, uuidParams } from '@svc/http';
import * as z from 'zod';
import { createSupporterInput, updateSupporterInput } from '../domain/input';
import { supporterResponse, supporterShape } from '../domain/shapes';
import { sortableField } from '../domain/supporter';
import {
  createSupporter,
  DEFAULT_LIST_SIZE,
  getSupporter,
  listSupporters,
  MAX_LIST_SIZE,
  updateSupporter,
} from '../domain/supporters';

/** A whole-number query parameter (query values arrive as text). */
const wholeNumber = (fallback: number, max: number, description: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, 'A whole number')
    .transform(Number)
    .pipe(z.number().int().max(max))
    .default(fallback)
    .meta({ description });

const listQuery = z.object({
  from: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'Offset into the ordered list (default 0)'),
  size: wholeNumber(
    DEFAULT_LIST_SIZE,
    MAX_LIST_SIZE,
    `Page size (default ${DEFAULT_LIST_SIZE}, at most ${MAX_LIST_SIZE})`,
  ),
  organisation_uuid: uuidParam.optional().meta({ description: 'Only this organisation (403 without a grant on it)' }),
  sort_by: sortableField.optional().meta({
    description: 'Any top-level field; supporters without it come last. Default: created',
  }),
  sort_order: z.enum(['asc', 'desc']).optional().meta({ description: 'Default: asc' }),
});

const supporterParams = uuidParams('supporter_uuid');

const FORBIDDEN = { description: "No grant on the supporter's organisation" };
const NOT_FOUND = { description: 'Unknown supporter (or malformed uuid)' };
const INVALID = { description: 'Invalid input; the details name each offending property' };

export const supportersRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/supporters',
    auth: 'token',
    operationId: 'listSupporters',
    summary: 'List supporters of the organisations your grants cover',
    description:
      'Oldest first unless sorted otherwise; ties keep creation order. Without organisation_uuid, ' +
      'the supporters of every organisation your grants touch.',
    query: listQuery,
    responses: {
      200: { description: 'Supporters', schema: z.array(supporterResponse) },
      400: INVALID,
      403: { description: 'organisation_uuid names an organisation without a grant' },
    },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listSupporters(await principal(), query)).map(supporterShape),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/supporters',
    auth: 'token',
    operationId: 'createSupporter',
    summary: 'Create a supporter',
    description: 'null, "" and {} leave a field unset.',
    body: createSupporterInput,
    responses: {
      201: { description: 'The new supporter', schema: supporterResponse },
      400: INVALID,
      403: { description: 'No grant on the organisation' },
      404: { description: 'Unknown organisation' },
    },
    handle: async ({ body, principal }) => ({
      status: 201,
      body: supporterShape(await createSupporter(principal(), body)),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/supporters/{supporter_uuid}',
    auth: 'token',
    operationId: 'getSupporter',
    summary: 'Get a supporter',
    params: supporterParams,
    responses: {
      200: { description: 'Supporter', schema: supporterResponse },
      403: FORBIDDEN,
      404: NOT_FOUND,
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: supporterShape(await getSupporter(principal(), params.supporter_uuid)),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/supporters/{supporter_uuid}',
    auth: 'token',
    operationId: 'updateSupporter',
    summary: 'Update a supporter',
    description:
      'Any subset of the fields; only those sent change. null, "" and {} remove a field. ' +
      'custom_parameters and svc_parameters are replaced whole. organisation_uuid is refused.',
    params: supporterParams,
    body: updateSupporterInput,
    responses: {
      200: { description: 'The updated supporter', schema: supporterResponse },
      400: INVALID,
      403: FORBIDDEN,
      404: NOT_FOUND,
    },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: supporterShape(await updateSupporter(principal(), params.supporter_uuid, body)),
    }),
  }),
];
