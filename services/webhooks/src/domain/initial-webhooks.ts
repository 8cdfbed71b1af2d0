import { definedFields, newToken, newUuid, now, ValidationError } from '@svc/core';
import { canonicalEventName, type EventName } from '@svc/events';
import type { TransactItem } from '@svc/table';
import * as z from 'zod';
import { open, seal } from '../repository/secrets';
import {
  type EndpointRecord,
  type EventSubscriptionRecord,
  endpointPut,
  eventSubscriptionPut,
} from '../repository/webhook-repository';
import { basicAuthUsername, endpointUrl } from './endpoints';

/**
 * Webhooks set in an onboarding call: each entry
 * names one organisation approval event and where to send it. Onboarding keeps the entries,
 * secrets sealed to the process, until the organisation exists; then each becomes an endpoint
 * and an event subscription of the new organisation, written in onboarding's own transaction.
 */
export const INITIAL_WEBHOOK_EVENTS: readonly EventName[] = [
  'svc.organisations.organisation.approval_requested',
  'svc.organisations.organisation.approved',
  'svc.organisations.organisation.declined',
];

export const initialWebhookInput = z
  .object({
    event_name: z.string().trim().min(1, 'This value should not be blank').max(200),
    endpoint: endpointUrl,
    username: basicAuthUsername.optional(),
    password: z.string().min(1).max(500).optional(),
    hmac_key: z.string().min(1).max(500).optional(),
  })
  .strict();
export type InitialWebhookInput = z.infer<typeof initialWebhookInput>;

/** As onboarding stores an entry: secrets sealed to the process and the entry's place in it. */
export interface SealedInitialWebhook {
  event_name: string;
  endpoint: string;
  username?: string;
  password?: string;
  hmac_key?: string;
}

/** Rule 10: onboarding events cannot be subscribed here; rule 11: approval events can. */
export function checkInitialWebhookEvent(name: string, property: string): void {
  const canonical = canonicalEventName(name);
  if (!canonical || !INITIAL_WEBHOOK_EVENTS.includes(canonical)) {
    throw ValidationError.field(
      property,
      'error.validation.not_valid',
      `Only organisation approval events can be subscribed here (${INITIAL_WEBHOOK_EVENTS.join(', ')}); subscribe to onboarding events through your own organisation's webhook settings`,
    );
  }
}

const processContext = (processUuid: string, index: number, field: 'password' | 'hmac_key') => ({
  endpoint: `onboarding/${processUuid}/${index}`,
  field,
});

export async function sealInitialWebhooks(
  processUuid: string,
  entries: readonly InitialWebhookInput[],
): Promise<SealedInitialWebhook[]> {
  return Promise.all(
    entries.map(async (entry, index) => ({
      event_name: entry.event_name,
      endpoint: entry.endpoint,
      ...definedFields({ username: entry.username }),
      ...(entry.password === undefined
        ? {}
        : { password: await seal(entry.password, processContext(processUuid, index, 'password')) }),
      ...(entry.hmac_key === undefined
        ? {}
        : { hmac_key: await seal(entry.hmac_key, processContext(processUuid, index, 'hmac_key')) }),
    })),
  );
}

/**
 * The endpoint and event subscription of each entry, for the new organisation: secrets opened
 * from the process and sealed again to the new endpoint; a missing HMAC key is generated, as
 * for any endpoint.
 */
export async function initialWebhookWrites(
  processUuid: string,
  organisationUuid: string,
  entries: readonly SealedInitialWebhook[],
): Promise<TransactItem[]> {
  const at = now();
  const writes = await Promise.all(
    entries.map(async (entry, index) => {
      const uuid = newUuid();
      const password = entry.password
        ? await open(entry.password, processContext(processUuid, index, 'password'))
        : undefined;
      const hmacKey = entry.hmac_key
        ? await open(entry.hmac_key, processContext(processUuid, index, 'hmac_key'))
        : newToken(32);
      const endpoint: EndpointRecord = {
        uuid,
        organisation_uuid: organisationUuid,
        endpoint: entry.endpoint,
        ...definedFields({ username: entry.username }),
        ...(password === undefined ? {} : { password: await seal(password, { endpoint: uuid, field: 'password' }) }),
        hmac_key: await seal(hmacKey, { endpoint: uuid, field: 'hmac_key' }),
        created: at,
        updated: at,
        version: 1,
      };
      const subscription: EventSubscriptionRecord = {
        uuid: newUuid(),
        organisation_uuid: organisationUuid,
        action_configuration_uuid: uuid,
        action_type: 'webhook',
        event_name: entry.event_name,
        canonical_event_name: canonicalEventName(entry.event_name) ?? entry.event_name,
        enabled: true,
        created: at,
        updated: at,
        version: 1,
      };
      return [endpointPut(endpoint), eventSubscriptionPut(subscription)];
    }),
  );
  return writes.flat();
}
