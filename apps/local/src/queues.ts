import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { asFunction, logger, sdkClient } from '@svc/core';
import { MAIL_MAX_RECEIVES, processMailBatch, resetMailQueueClient } from '@svc/mail';
import { processReceiptsBatch, resetReceiptsQueueClient } from '@svc/receipts';
import { processFileBatch } from '@svc/reconciliation';
import { processBillingBatch, resetBillingQueueClient } from '@svc/subscriptions';
import { DELIVERY_MAX_RECEIVES, processDeliveryBatch, resetDeliveryQueueClient } from '@svc/webhooks';
import type { SQSEvent, SQSMessageAttribute, SQSRecord } from 'aws-lambda';
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
  deliveryQueueUrl: string;
  deliveryDeadLetterUrl: string;
  filesQueueUrl: string;
  filesDeadLetterUrl: string;
  mailQueueUrl: string;
  mailDeadLetterUrl: string;
  receiptsQueueUrl: string;
  receiptsDeadLetterUrl: string;
  stop(): Promise<void>;
}

/** Seconds a received message stays hidden; a failed one comes back after this (real time). */
const VISIBILITY_TIMEOUT = 30;
const MAX_RECEIVE_COUNT = 5;
/** Batches a drain works on at once (the deployed workers run several invocations too). */
const CONCURRENT_BATCHES = 4;
/** Messages per receive (SQS's maximum, and the deployed workers' batch size). */
const RECEIVE_MAX = 10;

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
  client = sdkClient(new SQSClient({ endpoint }));
  const billing = await createQueueWithDlq(client, 'svc-billing');
  // The worker hands a held claim to the due index on the receive this limit makes the last.
  const delivery = await createQueueWithDlq(client, 'svc-webhook-deliveries', DELIVERY_MAX_RECEIVES);
  const files = await createQueueWithDlq(client, 'svc-reconciliation-files');
  const mail = await createQueueWithDlq(client, 'svc-mail', MAIL_MAX_RECEIVES);
  const receipts = await createQueueWithDlq(client, 'svc-receipts');
  process.env.SVC_BILLING_QUEUE_URL = billing.queueUrl;
  process.env.SVC_RECEIPTS_QUEUE_URL = receipts.queueUrl;
  process.env.SVC_DELIVERY_QUEUE_URL = delivery.queueUrl;
  process.env.SVC_MAIL_QUEUE_URL = mail.queueUrl;
  resetBillingQueueClient();
  resetDeliveryQueueClient();
  resetMailQueueClient();
  resetReceiptsQueueClient();
  return {
    endpoint,
    billingQueueUrl: billing.queueUrl,
    billingDeadLetterUrl: billing.deadLetterUrl,
    deliveryQueueUrl: delivery.queueUrl,
    deliveryDeadLetterUrl: delivery.deadLetterUrl,
    filesQueueUrl: files.queueUrl,
    filesDeadLetterUrl: files.deadLetterUrl,
    mailQueueUrl: mail.queueUrl,
    mailDeadLetterUrl: mail.deadLetterUrl,
    receiptsQueueUrl: receipts.queueUrl,
    receiptsDeadLetterUrl: receipts.deadLetterUrl,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      queues = undefined;
    },
  };
}

/** A queue and its dead-letter queue, redriven after `maxReceiveCount` receives like the deployed ones. */
async function createQueueWithDlq(sqs: SQSClient, name: string, maxReceiveCount = MAX_RECEIVE_COUNT) {
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(VISIBILITY_TIMEOUT),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
          maxReceiveCount,
        }),
      },
    }),
  );
  if (!queue.QueueUrl || !dlq.QueueUrl) throw new Error(`The local SQS stand-in did not create ${name}`);
  return { queueUrl: queue.QueueUrl, deadLetterUrl: dlq.QueueUrl };
}
/**
 * A received message as Lambda's SQS event source hands it to the worker: every system attribute
 * the receive returned (the four Lambda always sets get stand-ins where it returned none), and
 * the message attributes in Lambda's shape. `pnpm ops dlq:pull` writes a deployed queue's dead
 * letters this way too, with the queue's ARN and region, so there is one conversion to trust.
 */
export function toRecord(
  message: Message,
  eventSourceARN: string,
  awsRegion = process.env.AWS_REGION ?? 'eu-central-2',
): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, toRecordAttribute(value)]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion,
  };
}

/**
 * Lambda writes binary values base64-encoded and both list fields always (empty: SQS reserves them
 * and accepts no values in them), where ReceiveMessage gives bytes and leaves out what is unset.
 */
function toRecordAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  return {
    ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
    ...(value.BinaryValue !== undefined ? { binaryValue: base64(value.BinaryValue) } : {}),
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map(base64),
    dataType: value.DataType ?? 'String',
  };
}

/**
 * Up to ten visible messages of the queue, with every system attribute (as the event source asks).
 * The stand-in answers a receive no sooner than 40 ms (it polls its messages every 10 ms until a
 * full batch or 40 ms past WaitTimeSeconds; read from local-aws-sqs 2.0.2's dist), so an empty
 * queue is seen from its attributes first, which answer at once. It counts every message not
 * delayed (in flight ones too) and the delayed ones apart; a message just sent is delayed until a
 * 0 ms timer of the stand-in's has run, so both counts are asked: 0 and 0 only when nothing is there.
 */
async function receiveBatch(queueUrl: string): Promise<Message[]> {
  const { Attributes } = await (client as SQSClient).send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  if (Attributes?.ApproximateNumberOfMessages === '0' && Attributes.ApproximateNumberOfMessagesDelayed === '0') {
    return [];
  }
  const received = await (client as SQSClient).send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: RECEIVE_MAX,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return received.Messages ?? [];
}

/**
 * One invocation of the worker on a received batch, as Lambda's SQS event source makes it: the
 * messages it did not report failed are deleted; the failed ones come back after the visibility
 * timeout. Answers the worker's result and how many were done.
 */
async function invokeBatch<T>(
  queueUrl: string,
  messages: Message[],
  work: (event: SQSEvent) => Promise<{ failed: ReadonlySet<string>; result: T }>,
): Promise<{ result: T; done: number }> {
  const { failed, result } = await work({ Records: messages.map((m) => toRecord(m, queueUrl)) });
  const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
  if (done.length > 0) {
    await (client as SQSClient).send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return { result, done: done.length };
}

/**
 * Receives a queue's messages in batches of ten and hands them to its worker until nothing is
 * visible; successful messages are deleted, failed ones come back after the visibility timeout
 * (and end in the dead-letter queue after five receives), as with Lambda's SQS event source.
 */
async function drainQueue<T>(
  queueUrl: string,
  work: (event: SQSEvent) => Promise<{ failed: ReadonlySet<string>; result: T }>,
  onBatch: (result: T, done: number) => void,
): Promise<void> {
  const batch = async (): Promise<number> => {
    const messages = await receiveBatch(queueUrl);
    if (messages.length === 0) return 0;
    const { result, done } = await invokeBatch(queueUrl, messages, work);
    onBatch(result, done);
    return messages.length;
  };
  // One receive while the queue is quiet; under a back-log several batches at once, as Lambda
  // scales an SQS event source's invocations up. A lane stops at a batch that is not full: the
  // queue had nothing more visible then (what arrives later waits for the next drain).
  const lane = async () => {
    while ((await batch()) === RECEIVE_MAX);
  };
  if ((await batch()) < RECEIVE_MAX) return;
  await Promise.all(Array.from({ length: CONCURRENT_BATCHES }, lane));
}

const failedIds = (response: { batchItemFailures: Array<{ itemIdentifier: string }> }) =>
  new Set(response.batchItemFailures.map((f) => f.itemIdentifier));

export interface DrainSummary {
  processed: number;
  invoices_created: number;
  charge_attempts_created: number;
  succeeded: number;
  failed: number;
}

/** The billing queue through the billing worker. */
export async function drainBillingQueue(): Promise<DrainSummary> {
  const { billingQueueUrl } = await ensureLocalQueues();
  const total: DrainSummary = {
    processed: 0,
    invoices_created: 0,
    charge_attempts_created: 0,
    succeeded: 0,
    failed: 0,
  };
  await drainQueue(
    billingQueueUrl,
    async (event) => {
      const { response, outcome } = await asFunction('billing-worker', () => processBillingBatch(event));
      return { failed: failedIds(response), result: outcome };
    },
    (outcome, done) => {
      total.processed += done;
      total.invoices_created += outcome.invoices_created;
      total.charge_attempts_created += outcome.charge_attempts_created;
      total.succeeded += outcome.succeeded;
      total.failed += outcome.failed;
    },
  );
  return total;
}

const deliveryWork = async (event: SQSEvent) => {
  const result = await asFunction('delivery-worker', () => processDeliveryBatch(event));
  return { failed: failedIds(result.response), result: result.attempted };
};

/**
 * The delivery queue through the delivery worker, until nothing is visible; returns the attempts
 * made (`settle()`'s). What the poller below has under way is waited for first and last, and its
 * attempts meanwhile are counted, so "none" means the queue was quiet.
 */
export async function drainDeliveryQueue(): Promise<number> {
  const { deliveryQueueUrl } = await ensureLocalQueues();
  await deliveryPoller.idle();
  const before = deliveryPoller.attempted;
  let attempted = 0;
  await drainQueue(deliveryQueueUrl, deliveryWork, (count) => {
    attempted += count;
  });
  await deliveryPoller.idle();
  return attempted + deliveryPoller.attempted - before;
}

/** Invocations of the delivery worker the poller runs at once (the deployed worker's maximum concurrency). */
export const DELIVERY_POLLER_CONCURRENCY = 100;

/**
 * The delivery queue as Lambda's SQS event source polls it while `pnpm start` runs: each tick
 * receives batches while fewer than DELIVERY_POLLER_CONCURRENCY invocations are under way and
 * starts one for each, without waiting for those already running. A batch that waits on a slow
 * receiver holds its own invocation only, not the queue: later messages go to free invocations.
 */
export class QueuePoller {
  /** What the invocations answered, summed (the delivery worker's: attempts made). */
  attempted = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly concurrency: number,
    private readonly queueUrl: () => Promise<string>,
    private readonly work: (event: SQSEvent) => Promise<{ failed: ReadonlySet<string>; result: number }>,
  ) {}

  /** Invocations under way now. */
  get busy(): number {
    return this.running.size;
  }

  /** Starts invocations for what is visible now; answers the messages handed over. */
  async tick(): Promise<number> {
    const queueUrl = await this.queueUrl();
    let started = 0;
    while (this.running.size < this.concurrency) {
      const messages = await receiveBatch(queueUrl);
      if (messages.length === 0) break;
      started += messages.length;
      const run: Promise<void> = invokeBatch(queueUrl, messages, this.work)
        .then(({ result }) => {
          this.attempted += result;
        })
        // An invocation that fails leaves its messages to come back, as Lambda's would.
        .catch((error: unknown) => logger.error('A queue worker invocation failed; its messages come back', { error }))
        .finally(() => this.running.delete(run));
      this.running.add(run);
      if (messages.length < RECEIVE_MAX) break;
    }
    return started;
  }

  /** Resolves once no invocation it started is running (failures are the worker's to log). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

export const deliveryPoller = new QueuePoller(
  DELIVERY_POLLER_CONCURRENCY,
  async () => (await ensureLocalQueues()).deliveryQueueUrl,
  deliveryWork,
);

/** The reconciliation files queue (S3 object-created notifications) through the file processor. */
export async function drainFilesQueue(): Promise<number> {
  const { filesQueueUrl } = await ensureLocalQueues();
  let processed = 0;
  await drainQueue(
    filesQueueUrl,
    async (event) => {
      const result = await asFunction('file-processor', () => processFileBatch(event));
      return { failed: failedIds(result.response), result: result.processed };
    },
    (count) => {
      processed += count;
    },
  );
  return processed;
}

/** Sends a message to the files queue, as S3's notification configuration does in AWS. */
export async function sendToFilesQueue(body: string): Promise<void> {
  const { filesQueueUrl } = await ensureLocalQueues();
  await (client as SQSClient).send(new SendMessageCommand({ QueueUrl: filesQueueUrl, MessageBody: body }));
}

/** The mail queue through the mail worker, until nothing is visible; returns the mails sent. */
export async function drainMailQueue(): Promise<number> {
  const { mailQueueUrl } = await ensureLocalQueues();
  let sent = 0;
  await drainQueue(
    mailQueueUrl,
    async (event) => {
      const result = await asFunction('mail-worker', () => processMailBatch(event));
      return { failed: failedIds(result.response), result: result.sent };
    },
    (count) => {
      sent += count;
    },
  );
  return sent;
}

/** The receipts queue (batch pages, payment events) through the receipts worker; returns the messages done. */
export async function drainReceiptsQueue(): Promise<number> {
  const { receiptsQueueUrl } = await ensureLocalQueues();
  let done = 0;
  await drainQueue(
    receiptsQueueUrl,
    async (event) => {
      const result = await asFunction('receipts-worker', () => processReceiptsBatch(event));
      return { failed: failedIds(result.response), result: result.done };
    },
    (count) => {
      done += count;
    },
  );
  return done;
}

/** Sends a message to the receipts queue, as the bus rule on payment events does in AWS. */
export async function sendToReceiptsQueue(body: string): Promise<void> {
  const { receiptsQueueUrl } = await ensureLocalQueues();
  await (client as SQSClient).send(new SendMessageCommand({ QueueUrl: receiptsQueueUrl, MessageBody: body }));
}
