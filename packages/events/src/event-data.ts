import type * as z from 'zod';
import type { EventObject } from './names';
import type { StoredEvent } from './outbox';

/**
 * The `data` of an event: the object as its GET returns it, built from the item the event was
 * written with (the stream's new image) by the domain that owns the object, and the schema of
 * that `data` (the API description publishes it for each event under `webhooks`). Each domain
 * writes its entries `satisfies EventData<typeof schema>`, so `build` is typed by its schema.
 */
export interface EventData<S extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>> {
  schema: S;
  build: (event: StoredEvent, item: Record<string, unknown>) => Promise<z.output<S>>;
}

/** Each domain exports the event data of its objects; the composition root joins them. */
export type EventDataBuilders = Partial<Record<EventObject, EventData>>;
