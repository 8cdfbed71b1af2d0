import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { withoutSdkCallLogging } from '@svc/core';

/**
 * The delivery queue (SVC_DELIVERY_QUEUE_URL): one message per delivery attempt to start. Locally
 * the SDK reaches the SQS stand-in through AWS_ENDPOINT_URL_SQS.
 */
let client: SQSClient | undefined;

export function resetDeliveryQueueClient(): void {
  client = undefined;
}

export async function enqueueDeliveries(deliveryUuids: readonly string[]): Promise<void> {
  const url = process.env.SVC_DELIVERY_QUEUE_URL;
  if (!url) throw new Error('SVC_DELIVERY_QUEUE_URL is not set');
  client ??= withoutSdkCallLogging(new SQSClient({}));
  for (let i = 0; i < deliveryUuids.length; i += 10) {
    const batch = deliveryUuids.slice(i, i + 10);
    const out = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: batch.map((uuid, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify({ delivery_uuid: uuid }),
        })),
      }),
    );
    // A refused entry is not lost: its delivery is in the due index and the sweeper sends it.
    if ((out.Failed ?? []).length === batch.length) throw new Error('SQS refused every delivery message');
  }
}
