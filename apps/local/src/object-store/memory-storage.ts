import { Readable } from 'node:stream';
import {
  compareKeys,
  type ObjectInfo,
  type ObjectStorage,
  type PutOptions,
  receiveBody,
  type StagedObject,
} from './storage';

/** Objects held in memory (`:memory:`): for tests and throwaway runs. */
export function createMemoryStorage(): ObjectStorage {
  const buckets = new Map<string, Map<string, { info: ObjectInfo; body: Buffer }>>();
  const bucketOf = (bucket: string) => {
    const objects = buckets.get(bucket);
    if (!objects) throw new Error(`Unknown bucket ${bucket}`);
    return objects;
  };

  async function stage(
    bucket: string,
    key: string,
    body: AsyncIterable<Uint8Array>,
    options: PutOptions,
  ): Promise<StagedObject> {
    const objects = bucketOf(bucket);
    const chunks: Uint8Array[] = [];
    const { size, md5 } = await receiveBody(body, options, (chunk) => chunks.push(chunk));
    const info: ObjectInfo = {
      bucket,
      key,
      size,
      md5,
      contentType: options.contentType,
      lastModified: options.lastModified,
      metadata: { ...options.metadata },
    };
    return {
      info,
      commit: async () => {
        objects.set(key, { info, body: Buffer.concat(chunks) });
        return info;
      },
      discard: async () => {
        chunks.length = 0;
      },
    };
  }

  return {
    bucketExists: (bucket) => buckets.has(bucket),
    createBucket: async (bucket) => {
      if (buckets.has(bucket)) return false;
      buckets.set(bucket, new Map());
      return true;
    },
    stage,
    put: async (bucket, key, body, options) => (await stage(bucket, key, body, options)).commit(),
    head: async (bucket, key) => bucketOf(bucket).get(key)?.info,
    get: async (bucket, key) => {
      const stored = bucketOf(bucket).get(key);
      return stored && { info: stored.info, body: Readable.from([stored.body]) };
    },
    delete: async (bucket, key) => {
      bucketOf(bucket).delete(key);
    },
    list: async (bucket, prefix) =>
      [...bucketOf(bucket).values()]
        .map((stored) => stored.info)
        .filter((info) => info.key.startsWith(prefix))
        .sort((a, b) => compareKeys(a.key, b.key)),
  };
}
