import { NotFoundError, type Principal, uuidSchema } from '@svc/core';
import * as z from 'zod';
import { findResponse, type ResponseRecord, responsesOf } from '../repository/items';
import { assertCanManage, booleanText, listScope } from './access';
import { redeliver } from './delivery';

/** Webhook Responses (interface 2.16): one record per delivery attempt, newest first. */
export const listResponsesQuery = z.object({
  organisation_uuid: uuidSchema.optional(),
  account_uuid: uuidSchema.optional(),
  webhook_configuration_uuid: uuidSchema.optional(),
  event_uuid: uuidSchema.optional(),
  from: z.coerce.number().int().min(0).max(10_000).default(0),
  size: z.coerce.number().int().min(1).max(500).default(100),
});

export function responseListShape(r: ResponseRecord) {
  return {
    uuid: r.uuid,
    organisation_uuid: r.organisation_uuid,
    ...(r.account_uuid === undefined ? {} : { account_uuid: r.account_uuid }),
    webhook_configuration_uuid: r.webhook_configuration_uuid,
    event_uuid: r.event_uuid,
    object_uuid: r.object_uuid,
    sent_at: r.sent_at,
    error: booleanText(r.error),
    ...(r.status_code === undefined ? {} : { status_code: r.status_code }),
    ...(r.reason_phrase === undefined ? {} : { reason_phrase: r.reason_phrase }),
  };
}

export function responseShape(r: ResponseRecord) {
  return {
    ...responseListShape(r),
    attempt: r.attempt,
    ...(r.response_time === undefined ? {} : { response_time: r.response_time }),
    ...(r.error_message === undefined ? {} : { error_message: r.error_message }),
    do_not_retry: booleanText(r.do_not_retry),
    request_headers: r.request_headers,
    request_body: r.request_body,
    response_headers: r.response_headers,
    response_body: r.response_body,
  };
}

export async function listResponses(principal: Promise<Principal>, query: z.infer<typeof listResponsesQuery>) {
  const visible = listScope(await principal, query.organisation_uuid, query.account_uuid);
  const matches = (r: ResponseRecord) =>
    visible({ organisation_uuid: r.organisation_uuid, ...(r.account_uuid ? { account_uuid: r.account_uuid } : {}) }) &&
    (query.webhook_configuration_uuid === undefined ||
      r.webhook_configuration_uuid === query.webhook_configuration_uuid) &&
    (query.event_uuid === undefined || r.event_uuid === query.event_uuid);
  const found: ResponseRecord[] = [];
  const wanted = query.from + query.size;
  for await (const page of responsesOf(query.organisation_uuid as string)) {
    for (const response of page) if (matches(response)) found.push(response);
    if (found.length >= wanted) break;
  }
  return found.slice(query.from, wanted);
}

export async function readResponse(principal: Promise<Principal>, uuid: string): Promise<ResponseRecord> {
  const [caller, response] = await Promise.all([principal, findResponse(uuid)]);
  if (!response) throw new NotFoundError('Webhook response not found');
  assertCanManage(caller, {
    organisation_uuid: response.organisation_uuid,
    ...(response.account_uuid === undefined ? {} : { account_uuid: response.account_uuid }),
  });
  return response;
}

/** Sends the recorded attempt's event to its endpoint again, as a new delivery (202). */
export async function redeliverResponse(principal: Promise<Principal>, uuid: string) {
  const response = await readResponse(principal, uuid);
  return { delivery_uuid: await redeliver(response) };
}
