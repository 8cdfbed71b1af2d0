import { handleSqsBatch, oneByOne, workerHandler } from '@svc/core';
import type { S3EventRecord, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { processUploadedObject } from '../domain/processing';

/**
 * The processing Lambda: S3 sends each object-created notification to the files queue, whose
 * messages come here in batches. A message that fails is reported (ReportBatchItemFailures) and
 * comes back; after five receives it rests in the dead-letter queue, with an alarm, and the file
 * stays in the bucket, so nothing a user sent is lost.
 */
const notification = z.object({
  Records: z
    .array(
      z.looseObject({
        eventName: z.string(),
        s3: z.looseObject({
          object: z.looseObject({
            key: z.string(),
            eTag: z.string().optional(),
            versionId: z.string().optional(),
            size: z.number().optional(),
          }),
        }),
      }),
    )
    .optional(),
  /** S3's test message when a notification is configured: nothing to do. */
  Event: z.string().optional(),
});

/** S3 URL-encodes keys in notifications, spaces as `+`. */
export function keyOfRecord(record: Pick<S3EventRecord['s3']['object'], 'key'>): string {
  return decodeURIComponent(record.key.replace(/\+/g, ' '));
}

export async function processFileBatch(event: SQSEvent): Promise<{ response: SQSBatchResponse; processed: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'an S3 notification',
    (body) => notification.parse(body),
    // One file at a time: a batch of large files never sits in memory together.
    (notifications) => oneByOne(notifications, processNotification),
  );
  return { response, processed: results.reduce((sum, created) => sum + created, 0) };
}

/** The files one notification announces; how many of them made a new report. */
async function processNotification(parsed: z.infer<typeof notification>): Promise<number> {
  let created = 0;
  for (const record of parsed.Records ?? []) {
    if (!record.eventName.startsWith('ObjectCreated:')) continue;
    const { eTag, versionId } = record.s3.object;
    const result = await processUploadedObject(keyOfRecord(record.s3.object), eTag ?? '', versionId);
    if (result?.created) created += 1;
  }
  return created;
}

export const handler = workerHandler(
  'file-processor',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processFileBatch(event)).response,
);
