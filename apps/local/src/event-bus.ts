import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asFunction, newUuid } from '@svc/core';
import { RECEIPT_PAYMENT_EVENTS } from '@svc/receipts';
import { EVENT_SOURCE, fanOutMessages, resetBusClient } from '@svc/webhooks';
import type { EventBridgeEvent, SQSRecord } from 'aws-lambda';
import { sendToReceiptsQueue, toRecord } from './queues';

/**
 * The local stand-in for the EventBridge bus: a small server that speaks the PutEvents call of
 * the EventBridge JSON protocol (all the publisher uses), keeps what it receives, and hands the
 * events to the rule's target, the fan-out queue, whose worker gets them in batches of SQS
 * records with the EventBridge event as the body, as in AWS. The
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

/** Events handed to fan-out at once, as the fan-out queue's event source batches them in AWS. */
const FAN_OUT_BATCH = 10;
/** Batches a drain works on at once (the deployed fan-out runs several invocations too). */
const CONCURRENT_BATCHES = 4;

/** Where fan-out's records say they come from (the deployed fan-out queue's stand-in). */
const FAN_OUT_QUEUE = 'svc-local-fan-out';
/** An event as the rule's queue holds it: the EventBridge event is the message body. */
const asQueueRecord = (event: EventBridgeEvent<string, unknown>): SQSRecord =>
  toRecord({ MessageId: event.id, ReceiptHandle: event.id, Body: JSON.stringify(event) }, FAN_OUT_QUEUE);

/**
 * Delivers what the bus holds to the rules' targets: the receipts queue (the payment events a
 * receipt depends on) and the fan-out queue, whose messages go to fan-out in batches (events from
 * `svc` only). Events fan-out reports as failed stay on the
 * bus and are tried again on the next drain, as the queue would send them again.
 */
export async function drainBus(): Promise<number> {
  let handled = 0;
  const failed: Array<EventBridgeEvent<string, unknown>> = [];
  let problem: unknown;
  const batch = async () => {
    const events = pending.splice(0, FAN_OUT_BATCH).filter((event) => event.source === EVENT_SOURCE);
    if (events.length === 0) return;
    try {
      // The second rule: payment events that may change an issued receipt, to the receipts queue.
      const receiptEvents = events.filter((event) =>
        (RECEIPT_PAYMENT_EVENTS as readonly string[]).includes(event['detail-type']),
      );
      await Promise.all(receiptEvents.map((event) => sendToReceiptsQueue(JSON.stringify(event))));
      const { response } = await asFunction('fan-out', () => fanOutMessages({ Records: events.map(asQueueRecord) }));
      const refused = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const event of events) {
        if (refused.has(event.id)) failed.push(event);
        else handled += 1;
      }
      if (refused.size > 0) problem ??= new Error(`Fan-out refused ${refused.size} events; they will be retried`);
    } catch (error) {
      failed.push(...events);
      problem ??= error;
    }
  };
  while (pending.length > 0) await Promise.all(Array.from({ length: CONCURRENT_BATCHES }, batch));
  if (failed.length > 0) {
    pending.push(...failed);
    throw problem;
  }
  return handled;
}
