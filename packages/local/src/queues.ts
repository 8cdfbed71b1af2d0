import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { processBillingBatch, resetBillingQueueClient } from '@svc/subscriptions';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';

/**
 * The local SQS stand-in (`local-aws-sqs`, which speaks the SQS JSON protocol) with the billing
 * queue and its dead-letter queue, configured like the deployed ones. The handlers reach it
 * through AWS_ENDPOINT_URL_SQS and SVC_BILLING_QUEUE_URL, exactly as they reach SQS in AWS, and
 * the poller below hands their messages to the worker as Lambda's SQS event source would.
 */
export interface LocalQueues {
  endpoint: string;
  billingQueueUrl: string;
  billingDeadLetterUrl: string;
  stop(): Promise<void>;
}

/** Seconds a received message stays hidden; a failed one comes back after this (real time). */
const VISIBILITY_TIMEOUT = 30;
const MAX_RECEIVE_COUNT = 5;

let queues: Promise<LocalQueues> | undefined;
let client: SQSClient | undefined;

export function isLocalQueueRunning(): boolean {
  return queues !== undefined;
}

export function ensureLocalQueues(): Promise<LocalQueues> {
  queues ??= startQueues().catch((error: unknown) => {
    queues = undefined;
    throw error;
  });
  return queues;
}

async function startQueues(): Promise<LocalQueues> {
  const server = (await createSqsServer({ port: 0, hostname: '127.0.0.1' })) as Server;
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_ENDPOINT_URL_SQS = endpoint;
  process.env.AWS_REGION ??= 'eu-central-2';
  client = new SQSClient({ endpoint });
  const dlq = await client.send(new CreateQueueCommand({ QueueName: 'svc-billing-dlq' }));
  const dlqArn = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: 'svc-billing',
      Attributes: {
        VisibilityTimeout: String(VISIBILITY_TIMEOUT),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
          maxReceiveCount: MAX_RECEIVE_COUNT,
        }),
      },
    }),
  );
  if (!queue.QueueUrl || !dlq.QueueUrl) throw new Error('The local SQS stand-in did not create the billing queues');
  process.env.SVC_BILLING_QUEUE_URL = queue.QueueUrl;
  resetBillingQueueClient();
  return {
    endpoint,
    billingQueueUrl: queue.QueueUrl,
    billingDeadLetterUrl: dlq.QueueUrl,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      queues = undefined;
    },
  };
}

function toRecord(message: Message, queueUrl: string): SQSRecord {
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueUrl,
    awsRegion: process.env.AWS_REGION ?? 'eu-central-2',
  };
}

export interface DrainSummary {
  processed: number;
  invoices_created: number;
  charge_attempts_created: number;
  succeeded: number;
  failed: number;
}

/**
 * Receives billing messages in batches of ten and runs the worker on them until the queue has
 * nothing visible; successful messages are deleted, failed ones come back after the visibility
 * timeout (and end in the dead-letter queue after five receives), as with Lambda's event source.
 */
export async function drainBillingQueue(): Promise<DrainSummary> {
  const { billingQueueUrl } = await ensureLocalQueues();
  const sqs = client as SQSClient;
  const total: DrainSummary = {
    processed: 0,
    invoices_created: 0,
    charge_attempts_created: 0,
    succeeded: 0,
    failed: 0,
  };
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: billingQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return total;
    const event: SQSEvent = { Records: messages.map((m) => toRecord(m, billingQueueUrl)) };
    const { response, outcome } = await processBillingBatch(event);
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
    if (done.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: billingQueueUrl,
          Entries: done.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    total.processed += done.length;
    total.invoices_created += outcome.invoices_created;
    total.charge_attempts_created += outcome.charge_attempts_created;
    total.succeeded += outcome.succeeded;
    total.failed += outcome.failed;
  }
}
