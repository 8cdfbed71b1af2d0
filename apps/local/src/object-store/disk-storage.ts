import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import {
  compareKeys,
  isValidBucketName,
  KeyedLock,
  newVersionId,
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
 * Every version's metadata is kept too (`<sha256 of key>.<version id>.version.json`), with its
 * body: an overwrite or a delete leaves older versions readable by id, as a versioned bucket does.
 */
const StoredInfo = z.object({
  bucket: z.string(),
  key: z.string(),
  size: z.number().int().nonnegative(),
  md5: z.string().regex(/^[0-9a-f]{32}$/),
  contentType: z.string(),
  lastModified: z.number(),
  metadata: z.record(z.string(), z.string()),
  // Objects stored before versions were kept have S3's id for them: "null".
  versionId: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('null'),
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
  const versionPath = (bucket: string, key: string, versionId: string) =>
    join(bucketDir(bucket), `${keyName(key)}.${versionId}.version.json`);

  /** The current version's metadata, or that of the version named (which may be current). */
  async function findInfo(bucket: string, key: string, versionId: string | undefined) {
    const current = await readInfo(metaPath(bucket, key));
    if (versionId === undefined || current?.versionId === versionId) return current;
    if (!/^[A-Za-z0-9_-]+$/.test(versionId)) return undefined;
    return readInfo(versionPath(bucket, key, versionId));
  }

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
      versionId: newVersionId(),
      blob,
    };
    return {
      info: withoutBlob(stored),
      commit: () =>
        locks.run(`${bucket}/${name}`, async () => {
          // The version first, then the swap: a version named in a notification is always readable.
          await writeFile(join(dir, `${name}.${stored.versionId}.version.json`), JSON.stringify(stored));
          const staged = join(dir, `${name}.${randomUUID()}.tmp`);
          await writeFile(staged, JSON.stringify(stored));
          await rename(staged, join(dir, `${name}.json`));
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
    head: async (bucket, key, versionId) => {
      const info = await findInfo(bucket, key, versionId);
      return info && withoutBlob(info);
    },
    get: async (bucket, key, versionId) => {
      // An object stored before versions were kept loses its body on overwrite: read again.
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const info = await findInfo(bucket, key, versionId);
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
        // A delete marker: the key is gone from listings and plain reads; its versions stay.
        await rm(join(dir, `${name}.json`), { force: true });
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
