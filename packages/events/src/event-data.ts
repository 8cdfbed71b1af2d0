import type * as z from 'zod';
import type { EventObject } from './names';
import type { StoredEvent } from './outbox';

/**
 * The `data` of an event: the object as its GET returns it, built from the item the event was
 * written with (the stream's new image) by the domain that owns the object, and the schema of
 * that `data` (the API description publishes it for each event under `webhooks`; `build` is
 * typed by it, so the two cannot drift).
 */
export interface EventData<S extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>> {
  schema: S;
  build: (event: StoredEvent, item: Record<string, unknown>) => Promise<z.output<S>>;
}

/** An object's event data: its schema and the builder that answers it. */
export function eventData<S extends z.ZodType<Record<string, unknown>>>(
  schema: S,
  build: (event: StoredEvent, item: Record<string, unknown>) => Promise<z.output<S>>,
): EventData {
  return { schema, build } as unknown as EventData;
}

/** Each domain exports the event data of its objects; the composition root joins them. */
export type EventDataBuilders = Partial<Record<EventObject, EventData>>;
