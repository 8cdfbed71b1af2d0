import { join } from 'node:path';
import { now } from '@svc/core';
import { resetDocumentClient } from '@svc/receipts';
import { resetObjectClient } from '@svc/reconciliation';
import { registerBackgroundTask } from './background';
import { type ObjectStore, startObjectStore } from './object-store';
import { drainFilesQueue, drainReceiptsQueue, sendToFilesQueue } from './queues';

/**
 * Reconciliation files on one machine: the S3 stand-in (object-store/, which checks presigned
 * POST policies as S3 does) holds the bucket; each stored object's notification goes to the
 * local files queue, as S3's notification configuration sends it to SQS in AWS, and the queue
 * poller hands it to the file processor. `settle()` waits for notifications still being sent.
 */
export const LOCAL_BUCKET = 'svc-reconciliation-local';
/** The receipts' documents (a bucket of its own, as in AWS). */
export const LOCAL_RECEIPTS_BUCKET = 'svc-receipts-local';

let store: Promise<ObjectStore> | undefined;
const sending = new Set<Promise<void>>();

export function ensureLocalObjectStore(): Promise<ObjectStore> {
  store ??= start().catch((error: unknown) => {
    store = undefined;
    throw error;
  });
  return store;
}

async function start(): Promise<ObjectStore> {
  const dataDir = process.env.SVC_DATA_DIR ?? '.data';
  const started = await startObjectStore({
    dataDir: dataDir === ':memory:' ? ':memory:' : join(dataDir, 'objects'),
    buckets: [LOCAL_BUCKET, LOCAL_RECEIPTS_BUCKET],
    credentials: { [process.env.AWS_ACCESS_KEY_ID ?? 'local']: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' },
    now,
    onObjectCreated: (record) => {
      // As the deployed notification configuration: only uploads are announced.
      if (!record.s3.object.key.startsWith('uploads/')) return;
      const sent = sendToFilesQueue(JSON.stringify({ Records: [record] })).finally(() => sending.delete(sent));
      sending.add(sent);
      return sent;
    },
  });
  process.env.AWS_ENDPOINT_URL_S3 = started.url;
  process.env.SVC_RECONCILIATION_BUCKET ??= LOCAL_BUCKET;
  process.env.SVC_RECEIPTS_BUCKET ??= LOCAL_RECEIPTS_BUCKET;
  resetObjectClient();
  resetDocumentClient();
  return started;
}

registerBackgroundTask({
  name: 'reconciliation-files',
  intervalMs: 1_000,
  runOnce: async () => {
    await ensureLocalObjectStore();
    await Promise.allSettled([...sending]);
    return drainFilesQueue();
  },
});

registerBackgroundTask({
  name: 'receipts',
  intervalMs: 1_000,
  runOnce: async () => {
    await ensureLocalObjectStore();
    return drainReceiptsQueue();
  },
});
