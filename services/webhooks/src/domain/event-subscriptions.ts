import {
  type Assert,
  ConflictError,
  type Conforms,
  deferred,
  definedFields,
  isResumedRequest,
  newResourceUuid,
  now,
  type Principal,
  uuidSchema,
  ValidationError,
} from '@svc/core';
import { canonicalEventName } from '@svc/events';
import { parseFilter } from '@svc/filter';
import { transactWrite, versioned } from '@svc/table';
import * as z from 'zod';
import {
  deleteGuarded,
  type EventSubscriptionRecord,
  eventSubscriptionKey,
  eventSubscriptionPut,
  eventSubscriptionsOf,
  findEndpoint,
  findEventSubscription,
} from '../repository/webhook-repository';
import { assertCanManage, booleanText, changeManaged, checkScope, managedLister, managedReader } from './access';

/**
 * Event subscriptions: which events go to which webhook endpoint. The event name
 * may be canonical or a payment-gateway alias (stored as sent, matched by its canonical form);
 * the filter is parsed when it is written (400 with the position of the problem) and evaluated
 * per event by fan-out.
 */
const enabled = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);
const fields = {
  organisation_uuid: uuidSchema,
  account_uuid: uuidSchema.optional(),
  action_configuration_uuid: uuidSchema,
  action_type: z.string().min(1, 'This value should not be blank'),
  event_name: z.string().trim().min(1, 'This value should not be blank').max(200),
  filter: z.string().max(2000).nullable().optional(),
  enabled: enabled.optional(),
};
export const createSubscriptionInput = z.object(fields).strict();
export const replaceSubscriptionInput = z
  .object({ ...fields, organisation_uuid: fields.organisation_uuid.optional() })
  .strict();
export const updateSubscriptionInput = replaceSubscriptionInput.partial();
type SubscriptionInput = z.infer<typeof updateSubscriptionInput>;

/** An event subscription as the API answers it. */
export const eventSubscriptionResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    action_configuration_uuid: z.string(),
    action_type: z.literal('webhook'),
    event_name: z.string(),
    filter: z.string().optional(),
    enabled: z.enum(['true', 'false']),
  }),
);

type _EventSubscription = Assert<
  Conforms<ReturnType<typeof eventSubscriptionShape>, z.output<typeof eventSubscriptionResponse>>
>;

export function eventSubscriptionShape(s: EventSubscriptionRecord) {
  return {
    uuid: s.uuid,
    organisation_uuid: s.organisation_uuid,
    ...definedFields({ account_uuid: s.account_uuid }),
    action_configuration_uuid: s.action_configuration_uuid,
    action_type: s.action_type,
    event_name: s.event_name,
    ...definedFields({ filter: s.filter }),
    enabled: booleanText(s.enabled),
  };
}

function checkActionType(value: string): 'webhook' {
  if (value !== 'webhook') {
    throw ValidationError.field(
      'action_type',
      'the_value_you_selected_is_not_a_valid_choice',
      'Only the action type webhook is supported',
    );
  }
  return value;
}

function checkEventName(name: string): string {
  const canonical = canonicalEventName(name);
  if (!canonical) throw ValidationError.field('event_name', 'error.validation.not_valid', `Unknown event name ${name}`);
  return canonical;
}

function checkFilter(filter: string | null | undefined): string | undefined {
  if (filter === undefined || filter === null || filter.trim() === '') return undefined;
  const parsed = parseFilter(filter);
  if (!parsed.ok) {
    throw ValidationError.field(
      'filter',
      'error.validation.not_valid',
      `${parsed.message} (at character ${parsed.position + 1})`,
    );
  }
  return filter;
}

/** The endpoint exists, in the same organisation, and the caller manages it. */
async function checkEndpoint(caller: Principal, uuid: string, organisationUuid: string): Promise<void> {
  const endpoint = await findEndpoint(uuid);
  if (!endpoint || endpoint.organisation_uuid !== organisationUuid) {
    throw ValidationError.field(
      'action_configuration_uuid',
      'error.validation.not_valid',
      'No such webhook endpoint in this organisation',
    );
  }
  assertCanManage(caller, endpoint);
}

export async function createEventSubscription(
  principal: Promise<Principal>,
  input: z.infer<typeof createSubscriptionInput>,
) {
  const caller = await principal;
  assertCanManage(caller, input);
  const action_type = checkActionType(input.action_type);
  const canonical = checkEventName(input.event_name);
  const filter = checkFilter(input.filter);
  await checkScope(input.organisation_uuid, input.account_uuid);
  await checkEndpoint(caller, input.action_configuration_uuid, input.organisation_uuid);
  const uuid = newResourceUuid('event_subscription');
  // A re-run of a request that died after storing the subscription returns that subscription.
  const earlier = isResumedRequest() ? await findEventSubscription(uuid) : undefined;
  if (earlier) return earlier;
  const at = now();
  const subscription: EventSubscriptionRecord = {
    uuid,
    organisation_uuid: input.organisation_uuid,
    ...definedFields({ account_uuid: input.account_uuid }),
    action_configuration_uuid: input.action_configuration_uuid,
    action_type,
    event_name: input.event_name,
    canonical_event_name: canonical,
    ...definedFields({ filter }),
    enabled: input.enabled ?? true,
    created: at,
    updated: at,
    version: 1,
  };
  await transactWrite([{ item: eventSubscriptionPut(subscription) }]);
  return subscription;
}

export const readEventSubscription = managedReader(findEventSubscription, 'Event subscription not found');

export const listEventSubscriptions = managedLister(eventSubscriptionsOf);

/** PUT replaces (the filter and account cleared unless sent, `enabled` back to true); PATCH merges. */
export async function changeEventSubscription(
  principal: Promise<Principal>,
  uuid: string,
  input: SubscriptionInput,
  mode: 'replace' | 'update',
) {
  const refuseMove = () =>
    new ConflictError(
      'An event subscription cannot move to another organisation',
      'error.event_subscription.organisation',
      'organisation_uuid',
    );
  const read = (caller: Promise<Principal>) => readEventSubscription(caller, uuid);
  return changeManaged(
    principal,
    read,
    { organisationUuid: input.organisation_uuid, refuseMove },
    async (read, caller) => {
      const replace = mode === 'replace';
      const eventName = input.event_name ?? read.event_name;
      const accountUuid = 'account_uuid' in input ? input.account_uuid : replace ? undefined : read.account_uuid;
      const filter = 'filter' in input ? checkFilter(input.filter) : replace ? undefined : read.filter;
      const next: EventSubscriptionRecord = {
        uuid: read.uuid,
        organisation_uuid: read.organisation_uuid,
        ...definedFields({ account_uuid: accountUuid }),
        action_configuration_uuid: input.action_configuration_uuid ?? read.action_configuration_uuid,
        action_type: input.action_type === undefined ? read.action_type : checkActionType(input.action_type),
        event_name: eventName,
        canonical_event_name: checkEventName(eventName),
        ...definedFields({ filter }),
        enabled: input.enabled ?? (replace ? true : read.enabled),
        created: read.created,
        updated: now(),
        version: read.version + 1,
      };
      assertCanManage(caller, next);
      if (next.account_uuid !== read.account_uuid) await checkScope(next.organisation_uuid, next.account_uuid);
      if (next.action_configuration_uuid !== read.action_configuration_uuid) {
        await checkEndpoint(caller, next.action_configuration_uuid, next.organisation_uuid);
      }
      await transactWrite([versioned(eventSubscriptionPut(next, read.version))]);
      return next;
    },
  );
}

export async function deleteEventSubscription(principal: Promise<Principal>, uuid: string): Promise<void> {
  await changeManaged(
    principal,
    (caller) => readEventSubscription(caller, uuid),
    {},
    async (read) => {
      await transactWrite([versioned(deleteGuarded(eventSubscriptionKey(read.uuid), read.version))]);
    },
  );
}
