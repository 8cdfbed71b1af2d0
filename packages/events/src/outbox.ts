import { newUuid, now } from '@svc/core';
import { key, type TransactItem } from '@svc/table';
import type { EventName, EventObject } from './names';

/** The envelope every receiver gets (contract: delivery body `{"event": …}`). */
export interface EventEnvelope {
  uuid: string;
  name: EventName;
  created: number;
  object: EventObject;
  object_uuid: string;
  organisation_uuid: string;
  account_uuid?: string;
  /** Counts the events of one object (1, 2, …) so receivers can order them. */
  sequence: number;
  data: Record<string, unknown>;
}

export type NewEvent = Omit<EventEnvelope, 'uuid' | 'created'>;

/** Outbox items live a week; the table's stream carries them on long before that. */
const OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600;

/**
 * Access pattern: outbox item `pk = OUTBOX#<event uuid>`, `sk = EVENT`; read only through the
 * table's stream. Put it in the same transaction as the state change it announces, so the
 * change and its event are written together or not at all.
 */
export function outboxWrite(event: NewEvent): { envelope: EventEnvelope; item: TransactItem } {
  const envelope: EventEnvelope = { ...event, uuid: newUuid(), created: now() };
  return {
    envelope,
    item: {
      Put: {
        Item: {
          pk: key('OUTBOX', envelope.uuid),
          sk: 'EVENT',
          entity: 'outbox_event',
          event: envelope,
          ttl: envelope.created + OUTBOX_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}
