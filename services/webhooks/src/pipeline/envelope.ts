import {
  EVENTS_ATTRIBUTE,
  type EventDataBuilders,
  type EventObject,
  eventsOfChange,
  itemFromStreamImage,
} from '@svc/events';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Envelope } from '../repository/webhook-repository';

/**
 * From a stream record to the events it announces, each with its `data`: the object as its GET
 * returns it, built from the written item (the new image) by the owning domain's builder. The
 * item is the state the event announces, so `data` is never newer or older than the event.
 * Webhooks imports no domain: each exports its builders, and the composition root hands them
 * over (`useEventData`, through `wireDomains()` of @svc/api).
 */
let builders: EventDataBuilders = {};

/** Hands the builders over; answers those it replaces. */
export function useEventData(all: EventDataBuilders): EventDataBuilders {
  const before = builders;
  builders = all;
  return before;
}

export async function envelopesOf(record: DynamoDBRecord): Promise<Envelope[]> {
  // Most written items (deliveries, responses, grants…) carry no events: nothing to unmarshal.
  const raw = record.dynamodb?.NewImage as Record<string, unknown> | undefined;
  if (!raw || !(EVENTS_ATTRIBUTE in raw)) return [];
  // DynamoDB Local writes empty maps in stream images oddly; itemFromStreamImage repairs and unmarshalls.
  const newItem = itemFromStreamImage(record.dynamodb?.NewImage as Record<string, unknown> | undefined);
  const oldItem = itemFromStreamImage(record.dynamodb?.OldImage as Record<string, unknown> | undefined);
  const events = eventsOfChange(newItem, oldItem);
  if (events.length === 0 || !newItem) return [];
  return Promise.all(
    events.map(async (event) => {
      const dataOf = builders[event.object as EventObject];
      const data = dataOf ? await dataOf.build(event, newItem) : {};
      // Who made the change is part of `data` (contract section 12), not of the envelope.
      const { changed_by, ...announced } = event;
      return { ...announced, data: changed_by ? { ...data, changed_by } : data };
    }),
  );
}
