import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { sdkClient } from '@svc/core';
import type { Envelope } from '../repository/webhook-repository';
import { batchesOf } from './batches';

/**
 * Publishes envelopes to the event bus (SVC_EVENT_BUS_NAME): as many per call as PutEvents takes
 * (ten entries, 256 KB in all). `source` is `svc` and `detail-type` the event name, so bus rules
 * can route by name. Locally the SDK reaches the bus stand-in through AWS_ENDPOINT_URL_EVENTBRIDGE.
 */
export const EVENT_SOURCE = 'svc';
/** PutEvents takes at most ten entries… */
export const PUT_EVENTS_MAX = 10;
/** …of at most 256 KB together (an entry counts its source, detail-type and detail). */
const PUT_EVENTS_MAX_BYTES = 256 * 1024;
let client: EventBridgeClient | undefined;

export function resetBusClient(): void {
  client = undefined;
}

const sizeOf = (entry: PutEventsRequestEntry) =>
  Buffer.byteLength(entry.Source ?? '') +
  Buffer.byteLength(entry.DetailType ?? '') +
  Buffer.byteLength(entry.Detail ?? '');

/** Consecutive entries in calls PutEvents accepts (an entry too large alone goes alone, and fails). */
export function callsOf(entries: readonly PutEventsRequestEntry[]): PutEventsRequestEntry[][] {
  return batchesOf(entries, sizeOf, PUT_EVENTS_MAX, PUT_EVENTS_MAX_BYTES);
}

export async function publishEnvelopes(envelopes: readonly Envelope[]): Promise<void> {
  const bus = process.env.SVC_EVENT_BUS_NAME;
  if (!bus) throw new Error('SVC_EVENT_BUS_NAME is not set');
  client ??= sdkClient(new EventBridgeClient({}));
  const entries = envelopes.map((envelope) => ({
    EventBusName: bus,
    Source: EVENT_SOURCE,
    DetailType: envelope.name,
    Detail: JSON.stringify(envelope),
  }));
  for (const batch of callsOf(entries)) {
    const out = await (client as EventBridgeClient).send(new PutEventsCommand({ Entries: batch }));
    // The stream retries the record: fan-out is idempotent, so a partial batch published twice is harmless.
    if ((out.FailedEntryCount ?? 0) > 0) throw new Error(`The bus refused ${out.FailedEntryCount} events`);
  }
}
