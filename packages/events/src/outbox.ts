import { logger, newUuid, now } from '@svc/core';
import * as z from 'zod';
import { EVENT_NAMES, EVENT_OBJECTS, type EventName, type EventObject } from './names';

/**
 * Events ride on the item whose change they announce. Every write of such an item sets its
 * `events` attribute to the events of that write (an empty list when it has none), so the change
 * and its events are one atomic item write — no separate outbox item, no transaction for a
 * single-item change — and the table's stream (new and old images) carries them on.
 *
 * The stored event holds no `data`: the pipeline builds `data` from the stream record's new
 * image with the owning domain's shape function, which is exactly the object as its GET returned
 * it right after this write.
 */
export const EVENTS_ATTRIBUTE = 'events';

/** Who made a change (contract section 12): shown as the event's `data.changed_by`. */
export const CHANGE_ACTORS = ['supporter', 'organisation', 'system'] as const;
export const CHANGE_CHANNELS = ['portal', 'api', 'billing'] as const;
export const changedBySchema = z.object({ actor: z.enum(CHANGE_ACTORS), channel: z.enum(CHANGE_CHANNELS) });
export type ChangedBy = z.infer<typeof changedBySchema>;

export const storedEventSchema = z.object({
  uuid: z.string(),
  name: z.enum(EVENT_NAMES),
  created: z.number().int(),
  object: z.enum(EVENT_OBJECTS),
  object_uuid: z.string(),
  organisation_uuid: z.string(),
  account_uuid: z.string().optional(),
  /** Counts the events of one object (1, 2, …) so receivers can order them. */
  sequence: z.number().int().positive(),
  /** Who made the change the event announces (subscription events); the pipeline puts it in `data`. */
  changed_by: changedBySchema.optional(),
});
export type StoredEvent = z.infer<typeof storedEventSchema>;

/** What receivers get (contract: delivery body `{"event": …}`). */
export interface EventEnvelope extends StoredEvent {
  data: Record<string, unknown>;
}

export interface NewEvent {
  name: EventName;
  object: EventObject;
  object_uuid: string;
  organisation_uuid: string;
  account_uuid?: string;
  sequence: number;
  changed_by?: ChangedBy;
}

export function newEvent(event: NewEvent): StoredEvent {
  return { ...event, uuid: newUuid(), created: now() };
}

/**
 * The events a stream record announces: those on the new image that the old image did not
 * already carry (a write that leaves `events` untouched announces nothing again).
 */
export function eventsOfChange(
  newImage: Record<string, unknown> | undefined,
  oldImage: Record<string, unknown> | undefined,
): StoredEvent[] {
  // Each event on its own: one malformed entry (logged) never takes the others with it.
  const parse = (image: Record<string, unknown> | undefined) => {
    const raw = image?.[EVENTS_ATTRIBUTE];
    if (!Array.isArray(raw)) return [];
    return raw.flatMap((entry) => {
      const parsed = storedEventSchema.safeParse(entry);
      if (parsed.success) return [parsed.data];
      logger.error('A stored event is malformed and cannot be published', { entry, issues: parsed.error.issues });
      return [];
    });
  };
  const seen = new Set(parse(oldImage).map((event) => event.uuid));
  return parse(newImage).filter((event) => !seen.has(event.uuid));
}
