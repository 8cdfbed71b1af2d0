import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import {
  compareKeys,
  isValidBucketName,
  KeyedLock,
  type ObjectInfo,
  type ObjectStorage,
  type PutOptions,
  receiveBody,
  type StagedObject,
} from './storage';

/**
 * Objects kept as files: `<root>/<bucket>/<sha256 of key>.json` holds the metadata (including the
 * real key) and names the body file beside it. A key never becomes part of a path, so no key
 * (`../x`, an absolute path, `%2e%2e%2f`, any UTF-8) can reach outside the bucket's directory;
 * bucket names pass S3's naming rules before they name a directory. A body is written to a new
 * file and the metadata swapped in by rename, so a reader sees the old object or the new one.
 */
const StoredInfo = z.object({
  bucket: z.string(),
  key: z.string(),
  size: z.number().int().nonnegative(),
  md5: z.string().regex(/^[0-9a-f]{32}$/),
  contentType: z.string(),
  lastModified: z.number(),
  metadata: z.record(z.string(), z.string()),
  blob: z.string().regex(/^[0-9a-f]{64}\.[0-9a-f-]{36}\.body$/),
});
type StoredInfo = z.infer<typeof StoredInfo>;

export function createDiskStorage(directory: string): ObjectStorage {
  const root = resolve(directory);
  mkdirSync(root, { recursive: true });
  const buckets = new Set(
    readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && isValidBucketName(entry.name))
      .map((entry) => entry.name),
  );
  const locks = new KeyedLock();
  const bucketDir = (bucket: string) => {
    if (!buckets.has(bucket)) throw new Error(`Unknown bucket ${bucket}`);
    return join(root, bucket);
  };
  const keyName = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
  const metaPath = (bucket: string, key: string) => join(bucketDir(bucket), `${keyName(key)}.json`);

  async function readInfo(path: string): Promise<StoredInfo | undefined> {
    try {
      return StoredInfo.parse(JSON.parse(await readFile(path, 'utf8')));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  const withoutBlob = ({ blob: _blob, ...info }: StoredInfo): ObjectInfo => info;

  /** The body goes to a file of its own; commit swaps the metadata in and removes the previous body. */
  async function stage(
    bucket: string,
    key: string,
    body: AsyncIterable<Uint8Array>,
    options: PutOptions,
  ): Promise<StagedObject> {
    const dir = bucketDir(bucket);
    const name = keyName(key);
    const blob = `${name}.${randomUUID()}.body`;
    const handle = await open(join(dir, blob), 'wx');
    let received: { size: number; md5: string };
    try {
      received = await receiveBody(body, options, (chunk) => handle.write(chunk));
    } catch (error) {
      await handle.close();
      await rm(join(dir, blob), { force: true });
      throw error;
    }
    await handle.close();
    const stored: StoredInfo = {
      bucket,
      key,
      ...received,
      contentType: options.contentType,
      lastModified: options.lastModified,
      metadata: { ...options.metadata },
      blob,
    };
    return {
      info: withoutBlob(stored),
      commit: () =>
        locks.run(`${bucket}/${name}`, async () => {
          const previous = await readInfo(join(dir, `${name}.json`));
          const staged = join(dir, `${name}.${randomUUID()}.tmp`);
          await writeFile(staged, JSON.stringify(stored));
          await rename(staged, join(dir, `${name}.json`));
          if (previous && previous.blob !== blob) await rm(join(dir, previous.blob), { force: true });
          return withoutBlob(stored);
        }),
      discard: () => rm(join(dir, blob), { force: true }),
    };
  }

  return {
    bucketExists: (bucket) => buckets.has(bucket),
    createBucket: async (bucket) => {
      if (!isValidBucketName(bucket)) throw new Error(`Invalid bucket name ${bucket}`);
      if (buckets.has(bucket)) return false;
      await mkdir(join(root, bucket), { recursive: true });
      buckets.add(bucket);
      return true;
    },
    stage,
    put: async (bucket, key, body, options) => (await stage(bucket, key, body, options)).commit(),
    head: async (bucket, key) => {
      const info = await readInfo(metaPath(bucket, key));
      return info && withoutBlob(info);
    },
    get: async (bucket, key) => {
      // An overwrite may remove the body between reading the metadata and opening it: read again.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const info = await readInfo(metaPath(bucket, key));
        if (!info) return undefined;
        try {
          const handle = await open(join(bucketDir(bucket), info.blob), 'r');
          return { info: withoutBlob(info), body: handle.createReadStream() };
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
      throw new Error(`Object ${bucket}/${key} keeps changing; try again`);
    },
    delete: (bucket, key) => {
      const name = keyName(key);
      const dir = bucketDir(bucket);
      return locks.run(`${bucket}/${name}`, async () => {
        const info = await readInfo(join(dir, `${name}.json`));
        if (!info) return;
        await rm(join(dir, `${name}.json`), { force: true });
        await rm(join(dir, info.blob), { force: true });
      });
    },
    list: async (bucket, prefix) => {
      const dir = bucketDir(bucket);
      const names = (await readdir(dir)).filter((name) => /^[0-9a-f]{64}\.json$/.test(name));
      const infos = await Promise.all(names.map((name) => readInfo(join(dir, name))));
      return infos
        .filter((info): info is StoredInfo => info?.key.startsWith(prefix) === true)
        .map(withoutBlob)
        .sort((a, b) => compareKeys(a.key, b.key));
    },
  };
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}
