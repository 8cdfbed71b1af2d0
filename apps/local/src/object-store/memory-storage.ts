import { Readable } from 'node:stream';
import {
  compareKeys,
  newVersionId,
  type ObjectInfo,
  type ObjectStorage,
  type PutOptions,
  receiveBody,
  type StagedObject,
} from './storage';

/** Objects held in memory (`:memory:`): for tests and throwaway runs. */
export function createMemoryStorage(): ObjectStorage {
  type Stored = { info: ObjectInfo; body: Buffer };
  /** Per key: the current version (none after a delete) and every version by id. */
  const buckets = new Map<string, Map<string, { current?: Stored; versions: Map<string, Stored> }>>();
  const bucketOf = (bucket: string) => {
    const objects = buckets.get(bucket);
    if (!objects) throw new Error(`Unknown bucket ${bucket}`);
    return objects;
  };

  function find(bucket: string, key: string, versionId: string | undefined): Stored | undefined {
    const entry = bucketOf(bucket).get(key);
    return versionId === undefined ? entry?.current : entry?.versions.get(versionId);
  }

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
      versionId: newVersionId(),
    };
    return {
      info,
      commit: async () => {
        const stored = { info, body: Buffer.concat(chunks) };
        const entry = objects.get(key) ?? { versions: new Map<string, Stored>() };
        entry.versions.set(info.versionId, stored);
        entry.current = stored;
        objects.set(key, entry);
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
    head: async (bucket, key, versionId) => find(bucket, key, versionId)?.info,
    get: async (bucket, key, versionId) => {
      const stored = find(bucket, key, versionId);
      return stored && { info: stored.info, body: Readable.from([stored.body]) };
    },
    delete: async (bucket, key) => {
      const entry = bucketOf(bucket).get(key);
      if (entry) delete entry.current;
    },
    list: async (bucket, prefix) =>
      [...bucketOf(bucket).values()]
        .flatMap((entry) => (entry.current ? [entry.current.info] : []))
        .filter((info) => info.key.startsWith(prefix))
        .sort((a, b) => compareKeys(a.key, b.key)),
  };
}
