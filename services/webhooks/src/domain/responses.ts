import {
  type Assert,
  allowedIf,
  type Conforms,
  deferred,
  definedFields,
  type Principal,
  readFor,
  uuidSchema,
} from '@svc/core';
import * as z from 'zod';
import { findResponse, type ResponseRecord, responsesOf } from '../repository/webhook-repository';
import { booleanText, canManage, listScope } from './access';
import { redeliver } from './delivery';

/** Webhook Responses: one record per delivery attempt, newest first. */
export const listResponsesQuery = z.object({
  organisation_uuid: uuidSchema.optional(),
  account_uuid: uuidSchema.optional(),
  webhook_configuration_uuid: uuidSchema.optional(),
  event_uuid: uuidSchema.optional(),
  from: z.coerce.number().int().min(0).max(10_000).default(0),
  size: z.coerce.number().int().min(1).max(500).default(100),
});

/** A delivery attempt as a list shows it. */
export const webhookResponseSummary = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    webhook_configuration_uuid: z.string(),
    event_uuid: z.string(),
    object_uuid: z.string(),
    sent_at: z.number().int(),
    error: z.enum(['true', 'false']),
    status_code: z.number().int().optional(),
    reason_phrase: z.string().optional(),
    attempt: z.number().int(),
    response_time: z.number().int().optional().describe('Milliseconds'),
    error_message: z.string().optional(),
    do_not_retry: z.enum(['true', 'false']),
  }),
);
/** A delivery attempt in full: what was sent and what came back (bodies and headers as text). */
export const webhookResponseDetail = deferred(() =>
  webhookResponseSummary.unwrap().extend({
    request_headers: z.string(),
    request_body: z.string(),
    response_headers: z.string(),
    response_body: z.string(),
  }),
);

type _Summary = Assert<Conforms<ReturnType<typeof responseListShape>, z.output<typeof webhookResponseSummary>>>;
type _Detail = Assert<Conforms<ReturnType<typeof responseShape>, z.output<typeof webhookResponseDetail>>>;

export function responseListShape(r: ResponseRecord) {
  return {
    uuid: r.uuid,
    organisation_uuid: r.organisation_uuid,
    ...definedFields({ account_uuid: r.account_uuid }),
    webhook_configuration_uuid: r.webhook_configuration_uuid,
    event_uuid: r.event_uuid,
    object_uuid: r.object_uuid,
    sent_at: r.sent_at,
    error: booleanText(r.error),
    ...definedFields({ status_code: r.status_code }),
    ...definedFields({ reason_phrase: r.reason_phrase }),
    attempt: r.attempt,
    ...definedFields({ response_time: r.response_time }),
    ...definedFields({ error_message: r.error_message }),
    do_not_retry: booleanText(r.do_not_retry),
  };
}

/**
 * The single answer adds the request's and the answer's headers and bodies: up to 16 KiB each
 * (RECORD_LIMIT), so a list page of up to 500 would pass Lambda's 6 MB response limit; a list
 * shows everything else.
 */
export function responseShape(r: ResponseRecord) {
  return {
    ...responseListShape(r),
    request_headers: r.request_headers,
    request_body: r.request_body,
    response_headers: r.response_headers,
    response_body: r.response_body,
  };
}

/**
 * A filtered list reads at most this many records (newest first) of the partition it lists: an
 * endpoint's when `webhook_configuration_uuid` is given, else the organisation's.
 */
export const RESPONSE_SCAN_LIMIT = 5_000;

/** A response is readable by whoever manages both its endpoint and the account of its event. */
function readable(caller: Principal, r: ResponseRecord): boolean {
  const scope = (account: string | undefined) => ({
    organisation_uuid: r.organisation_uuid,
    ...definedFields({ account_uuid: account }),
  });
  return canManage(caller, scope(r.endpoint_account_uuid)) && canManage(caller, scope(r.account_uuid));
}

export async function listResponses(principal: Promise<Principal>, query: z.infer<typeof listResponsesQuery>) {
  const caller = await principal;
  listScope(caller, query.organisation_uuid, query.account_uuid);
  const matches = (r: ResponseRecord) =>
    r.organisation_uuid === query.organisation_uuid &&
    readable(caller, r) &&
    (query.account_uuid === undefined || r.account_uuid === query.account_uuid) &&
    (query.webhook_configuration_uuid === undefined ||
      r.webhook_configuration_uuid === query.webhook_configuration_uuid) &&
    (query.event_uuid === undefined || r.event_uuid === query.event_uuid);
  const found: ResponseRecord[] = [];
  const wanted = query.from + query.size;
  const pages = responsesOf(query.organisation_uuid as string, query.webhook_configuration_uuid, RESPONSE_SCAN_LIMIT);
  for await (const page of pages) {
    for (const response of page) if (matches(response)) found.push(response);
    if (found.length >= wanted) break;
  }
  return found.slice(query.from, wanted);
}

export async function readResponse(principal: Promise<Principal>, uuid: string): Promise<ResponseRecord> {
  return readFor(principal, findResponse(uuid), 'Webhook response not found', allowedIf(readable));
}

/** Sends the recorded attempt's event to its endpoint again, as a new delivery (202). */
export async function redeliverResponse(principal: Promise<Principal>, uuid: string) {
  const response = await readResponse(principal, uuid);
  return { delivery_uuid: await redeliver(response) };
}
