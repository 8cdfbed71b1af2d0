import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newUuid } from '@svc/core';
import { EVENT_SOURCE, fanOutEvent, resetBusClient } from '@svc/webhooks';
import type { EventBridgeEvent } from 'aws-lambda';

/**
 * The local stand-in for the EventBridge bus: a small server that speaks the PutEvents call of
 * the EventBridge JSON protocol (all the publisher uses), keeps what it receives, and hands each
 * event to the rule's target (fan-out) as the EventBridge event Lambda would receive. The
 * publisher reaches it through AWS_ENDPOINT_URL_EVENTBRIDGE, unchanged from AWS.
 */
interface PutEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
}

const pending: Array<EventBridgeEvent<string, unknown>> = [];
let bus: Promise<{ endpoint: string; stop(): Promise<void> }> | undefined;

function toEvent(entry: PutEntry): EventBridgeEvent<string, unknown> {
  return {
    version: '0',
    id: newUuid(),
    'detail-type': entry.DetailType ?? '',
    source: entry.Source ?? '',
    account: '000000000000',
    time: new Date().toISOString(),
    region: process.env.AWS_REGION ?? 'eu-central-2',
    resources: [],
    detail: JSON.parse(entry.Detail ?? '{}'),
  };
}

async function readBody(request: import('node:http').IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function startBus() {
  const server: Server = createServer(async (request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(body));
    };
    if (target !== 'AWSEvents.PutEvents') {
      reply(400, {
        __type: 'UnknownOperationException',
        message: `The local bus serves PutEvents only, not ${target}`,
      });
      return;
    }
    try {
      const { Entries = [] } = JSON.parse(await readBody(request)) as { Entries?: PutEntry[] };
      const ids = Entries.map((entry) => {
        const event = toEvent(entry);
        pending.push(event);
        return { EventId: event.id };
      });
      reply(200, { FailedEntryCount: 0, Entries: ids });
    } catch (error) {
      reply(400, { __type: 'ValidationException', message: String(error) });
    }
  });
  return new Promise<{ endpoint: string; stop(): Promise<void> }>((done) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const endpoint = `http://127.0.0.1:${port}`;
      process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = endpoint;
      process.env.SVC_EVENT_BUS_NAME ??= 'svc-local-events';
      resetBusClient();
      done({
        endpoint,
        stop: async () => {
          server.closeAllConnections();
          await new Promise<void>((closed) => server.close(() => closed()));
          bus = undefined;
        },
      });
    });
  });
}

export function ensureLocalBus() {
  bus ??= startBus();
  return bus;
}

/** Delivers what the bus holds to the rule's target (events from `svc` → fan-out). */
export async function drainBus(): Promise<number> {
  let handled = 0;
  while (pending.length > 0) {
    const event = pending.shift() as EventBridgeEvent<string, unknown>;
    if (event.source !== EVENT_SOURCE) continue;
    try {
      await fanOutEvent(event);
    } catch (error) {
      // EventBridge retries a failed target; so does this stand-in, on the next drain.
      pending.push(event);
      throw error;
    }
    handled += 1;
  }
  return handled;
}
