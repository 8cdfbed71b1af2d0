import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { now } from '@svc/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiskStorage } from './disk-storage';
import { type ObjectStore, startObjectStore } from './server';

/** No key, however it is spelled or encoded, leads outside the store's directory. */
let base: string;
let root: string;
let store: ObjectStore;
let s3: S3Client;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'svc-object-store-paths-'));
  root = join(base, 'store');
  mkdirSync(join(base, 'neighbour'));
  store = await startObjectStore({ dataDir: root, buckets: ['uploads'], credentials: { local: 'local' }, now });
  s3 = new S3Client({
    endpoint: store.url,
    forcePathStyle: true,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});

afterAll(async () => {
  s3.destroy();
  await store.close();
  rmSync(base, { recursive: true, force: true });
});

/** A request with its path sent exactly as written (fetch and URL would resolve the dots). */
function rawRequest(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: store.port, method, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(base, join(entry.parentPath, entry.name)));
}

function expectEverythingInsideTheBucket(): void {
  expect(readdirSync(join(base, 'neighbour'))).toEqual([]);
  expect(readdirSync(base).sort()).toEqual(['neighbour', 'store']);
  for (const file of filesUnder(base)) {
    const [top, bucket, name, ...rest] = file.split(sep);
    expect({ top, bucket, rest }).toEqual({ top: 'store', bucket: 'uploads', rest: [] });
    // Names the store made: the key's hash, then the current metadata, a version's (its id is
    // ours, never the caller's) or a body.
    expect(name).toMatch(/^[0-9a-f]{64}\.(json|[A-Za-z0-9_-]{32}\.version\.json|[0-9a-f-]{36}\.body)$/);
  }
}

describe('keys and the storage directory', () => {
  const rawPaths = [
    '/uploads/../x',
    '/uploads/a/../../b',
    '/uploads/%2e%2e/%2e%2e/neighbour/c',
    '/uploads/..%2F..%2Fneighbour%2Fd',
    '/uploads/%2e%2e%2f%2e%2e%2f%2e%2e%2fe',
    '/uploads//etc/f',
    '/uploads/%2Fabsolute%2Fg',
    '/uploads/..%5C..%5Cwindows',
  ];

  it.each(rawPaths)('keeps %s inside the bucket and reads it back by the same key', async (path) => {
    expect((await rawRequest('PUT', path, `content of ${path}`)).status).toBe(200);
    expect(await rawRequest('GET', path)).toEqual({ status: 200, body: `content of ${path}` });
    expectEverythingInsideTheBucket();
  });

  it.each(['../x', 'a/../../b', '%2e%2e/', '../../neighbour/y', '/abs/z'])(
    'keeps the SDK key %s inside the bucket',
    async (key) => {
      await s3.send(new PutObjectCommand({ Bucket: 'uploads', Key: key, Body: `sdk ${key}` }));
      const got = await s3.send(new GetObjectCommand({ Bucket: 'uploads', Key: key }));
      expect(await got.Body?.transformToString()).toBe(`sdk ${key}`);
      expectEverythingInsideTheBucket();
    },
  );

  it('refuses bucket names that could name a directory outside', async () => {
    expect((await rawRequest('PUT', '/..')).status).toBe(400);
    expect((await rawRequest('PUT', '/%2e%2e')).status).toBe(400);
    expect((await rawRequest('PUT', '/..%2Fescape')).status).toBe(400);
    expect((await rawRequest('GET', '/../uploads/x')).status).toBe(404);
    expectEverythingInsideTheBucket();
  });

  it('keeps keys inside when storage is used directly', async () => {
    const storage = createDiskStorage(root);
    for (const key of ['../../../../tmp/evil', '..\\..\\evil', 'nul\u0000byte', `${'../'.repeat(40)}deep`]) {
      const options = { contentType: 'text/plain', metadata: {}, lastModified: 0, maxBytes: 1000 };
      await storage.put('uploads', key, Readable.from([Buffer.from(key)]), options);
      expect((await storage.head('uploads', key))?.key).toBe(key);
    }
    expectEverythingInsideTheBucket();
  });
});
