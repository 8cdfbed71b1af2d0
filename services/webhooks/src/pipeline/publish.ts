import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { Envelope } from '../repository/items';

/**
 * Publishes envelopes to the event bus (SVC_EVENT_BUS_NAME), ten per call. `source` is `svc`
 * and `detail-type` the event name, so bus rules can route by name. Locally the SDK reaches the
 * bus stand-in through AWS_ENDPOINT_URL_EVENTBRIDGE.
 */
export const EVENT_SOURCE = 'svc';
let client: EventBridgeClient | undefined;

export function resetBusClient(): void {
  client = undefined;
}

export async function publishEnvelopes(envelopes: readonly Envelope[]): Promise<void> {
  const bus = process.env.SVC_EVENT_BUS_NAME;
  if (!bus) throw new Error('SVC_EVENT_BUS_NAME is not set');
  client ??= new EventBridgeClient({});
  for (let i = 0; i < envelopes.length; i += 10) {
    const batch = envelopes.slice(i, i + 10);
    const out = await client.send(
      new PutEventsCommand({
        Entries: batch.map((envelope) => ({
          EventBusName: bus,
          Source: EVENT_SOURCE,
          DetailType: envelope.name,
          Detail: JSON.stringify(envelope),
        })),
      }),
    );
    // The stream retries the record: fan-out is idempotent, so a partial batch published twice is harmless.
    if ((out.FailedEntryCount ?? 0) > 0) throw new Error(`The bus refused ${out.FailedEntryCount} events`);
  }
}
