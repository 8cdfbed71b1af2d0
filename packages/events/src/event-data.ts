import type { EventObject } from './names';
import type { StoredEvent } from './outbox';

/**
 * The `data` of an event: the object as its GET returns it, built from the item the event was
 * written with (the stream's new image) by the domain that owns the object.
 */
export type EventDataBuilder = (event: StoredEvent, item: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** Each domain exports the builders of its objects; the composition root joins them for the stream publisher. */
export type EventDataBuilders = Partial<Record<EventObject, EventDataBuilder>>;
