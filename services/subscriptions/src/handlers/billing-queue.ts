import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { sdkClient } from '@svc/core';
import type { DueEntry } from '../repository/subscription-repository';

/**
 * The billing queue (SVC_BILLING_QUEUE_URL). Locally the SDK reaches the SQS stand-in through
 * AWS_ENDPOINT_URL_SQS, so this code is the same in both places.
 */
let client: SQSClient | undefined;

export function resetBillingQueueClient(): void {
  client = undefined;
}

function queueUrl(): string {
  const url = process.env.SVC_BILLING_QUEUE_URL;
  if (!url) throw new Error('SVC_BILLING_QUEUE_URL is not set');
  return url;
}

/** Sends the entries, ten per batch call; entries SQS refuses are sent again, then it throws. */
export async function enqueueDueEntries(entries: readonly DueEntry[]): Promise<void> {
  client ??= sdkClient(new SQSClient({}));
  const url = queueUrl();
  const batches: DueEntry[][] = [];
  for (let i = 0; i < entries.length; i += 10) batches.push(entries.slice(i, i + 10));
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(batches.slice(i, i + 8).map((batch) => sendBatch(url, batch)));
  }
}

async function sendBatch(url: string, batch: DueEntry[], attempt = 1): Promise<void> {
  const out = await (client as SQSClient).send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: batch.map((entry, index) => ({ Id: String(index), MessageBody: JSON.stringify(entry) })),
    }),
  );
  const failed = (out.Failed ?? []).map((f) => batch[Number(f.Id)]).filter((e): e is DueEntry => e !== undefined);
  if (failed.length === 0) return;
  if (attempt >= 3) throw new Error(`SQS refused ${failed.length} billing messages: ${out.Failed?.[0]?.Message}`);
  await sendBatch(url, failed, attempt + 1);
}
