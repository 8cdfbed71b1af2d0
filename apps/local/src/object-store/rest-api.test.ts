import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { now } from '@svc/core';
import type { S3EventRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ObjectStore, startObjectStore } from './server';

/** The S3 REST operations through the AWS SDK v3, against both kinds of storage. */
describe.each(['memory', 'disk'])('the object store REST API (%s)', (kind) => {
  let store: ObjectStore;
  let s3: S3Client;
  let directory: string | undefined;
  const records: S3EventRecord[] = [];

  beforeAll(async () => {
    directory = kind === 'disk' ? mkdtempSync(join(tmpdir(), 'svc-object-store-')) : undefined;
    store = await startObjectStore({
      dataDir: directory ?? ':memory:',
      buckets: ['reconciliation'],
      credentials: { local: 'local' },
      now,
      onObjectCreated: (record) => {
        records.push(record);
      },
    });
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
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  beforeEach(() => {
    records.length = 0;
  });

  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof S3ServiceException) return { name: error.name, status: error.$metadata.httpStatusCode };
      throw error;
    }
    throw new Error('expected the request to fail');
  };

  it('stores a PutObject with its content type and metadata, and announces it', async () => {
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: 'reconciliation',
        Key: 'org/a b.csv',
        Body: 'x;y\n1;2\n',
        ContentType: 'text/csv',
        Metadata: { source: 'bank' },
      }),
    );
    expect(put.ETag).toBe(`"${createHash('md5').update('x;y\n1;2\n').digest('hex')}"`);

    const got = await s3.send(new GetObjectCommand({ Bucket: 'reconciliation', Key: 'org/a b.csv' }));
    expect(await got.Body?.transformToString()).toBe('x;y\n1;2\n');
    expect({ type: got.ContentType, meta: got.Metadata, etag: got.ETag, length: got.ContentLength }).toEqual({
      type: 'text/csv',
      meta: { source: 'bank' },
      etag: put.ETag,
      length: 8,
    });
    expect(records).toHaveLength(1);
    expect(records[0]?.eventName).toBe('ObjectCreated:Put');
    expect(records[0]?.s3.object).toMatchObject({ key: 'org/a+b.csv', size: 8, eTag: put.ETag?.replaceAll('"', '') });
  });

  it('keeps every version, as a versioned bucket does: each write has an id, which its notification names, and old versions stay readable', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: 'reconciliation', Key: 'v/file.csv', Body: 'one' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: 'reconciliation', Key: 'v/file.csv', Body: 'two!' }));
    expect(first.VersionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(second.VersionId).not.toBe(first.VersionId);
    // S3's notification names the version it announces (s3.object.versionId).
    expect(records.map((record) => record.s3.object.versionId)).toEqual([first.VersionId, second.VersionId]);

    const read = async (VersionId?: string) => {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'reconciliation', Key: 'v/file.csv', VersionId }));
      return { body: await got.Body?.transformToString(), version: got.VersionId };
    };
    expect(await read()).toEqual({ body: 'two!', version: second.VersionId });
    expect(await read(first.VersionId)).toEqual({ body: 'one', version: first.VersionId });
    const head = await s3.send(
      new HeadObjectCommand({ Bucket: 'reconciliation', Key: 'v/file.csv', VersionId: first.VersionId }),
    );
    expect({ length: head.ContentLength, version: head.VersionId }).toEqual({ length: 3, version: first.VersionId });

    // A delete hides the key; its versions stay readable by id. An unknown version is 404 NoSuchVersion.
    await s3.send(new DeleteObjectCommand({ Bucket: 'reconciliation', Key: 'v/file.csv' }));
    expect((await failure(read())).name).toBe('NoSuchKey');
    expect(await read(second.VersionId)).toEqual({ body: 'two!', version: second.VersionId });
    expect(await failure(read('no-such-version'))).toEqual({ name: 'NoSuchVersion', status: 404 });
  });

  it('accepts a streamed body, which the SDK sends aws-chunked', async () => {
    const body = Readable.from([Buffer.from('first,'), Buffer.from('second')]);
    await s3.send(new PutObjectCommand({ Bucket: 'reconciliation', Key: 'stream.txt', Body: body, ContentLength: 12 }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'reconciliation', Key: 'stream.txt' }));
    expect(await got.Body?.transformToString()).toBe('first,second');
  });

  it('heads and deletes objects, and answers 404 NoSuchKey for a missing one', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'reconciliation', Key: 'gone.txt', Body: 'bye' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'reconciliation', Key: 'gone.txt' }));
    expect(head.ContentLength).toBe(3);
    await s3.send(new DeleteObjectCommand({ Bucket: 'reconciliation', Key: 'gone.txt' }));
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'reconciliation', Key: 'gone.txt' })))).toEqual({
      name: 'NoSuchKey',
      status: 404,
    });
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: 'reconciliation', Key: 'gone.txt' })))).toEqual({
      name: 'NotFound',
      status: 404,
    });
  });

  it('answers 404 NoSuchBucket for a bucket it does not have', async () => {
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'nowhere', Key: 'x' })))).toEqual({
      name: 'NoSuchBucket',
      status: 404,
    });
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'nowhere', Key: 'x', Body: 'x' })))).toEqual({
      name: 'NoSuchBucket',
      status: 404,
    });
    expect((await failure(s3.send(new HeadBucketCommand({ Bucket: 'nowhere' })))).status).toBe(404);
  });

  it('creates buckets and refuses invalid or existing ones', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: `extra-${kind}` }));
    expect((await s3.send(new HeadBucketCommand({ Bucket: `extra-${kind}` }))).$metadata.httpStatusCode).toBe(200);
    expect((await failure(s3.send(new CreateBucketCommand({ Bucket: `extra-${kind}` })))).status).toBe(409);
    expect(await failure(s3.send(new CreateBucketCommand({ Bucket: 'Not_A_Bucket' })))).toEqual({
      name: 'InvalidBucketName',
      status: 400,
    });
  });

  it('lists by prefix, groups by delimiter and pages with continuation tokens', async () => {
    for (const key of ['list/b.csv', 'list/a.csv', 'list/sub/c.csv', 'list/sub/d.csv', 'list/z.csv', 'other.csv']) {
      await s3.send(new PutObjectCommand({ Bucket: 'reconciliation', Key: key, Body: key }));
    }
    const flat = await s3.send(new ListObjectsV2Command({ Bucket: 'reconciliation', Prefix: 'list/' }));
    expect(flat.Contents?.map((object) => object.Key)).toEqual([
      'list/a.csv',
      'list/b.csv',
      'list/sub/c.csv',
      'list/sub/d.csv',
      'list/z.csv',
    ]);
    expect(flat.Contents?.[0]).toMatchObject({ Size: 10 });

    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: 'reconciliation',
          Prefix: 'list/',
          Delimiter: '/',
          MaxKeys: 2,
          ContinuationToken: token,
        }),
      );
      keys.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
      keys.push(...(page.CommonPrefixes ?? []).map((prefix) => `prefix:${prefix.Prefix}`));
      token = page.NextContinuationToken;
    } while (token);
    expect(keys.sort()).toEqual(['list/a.csv', 'list/b.csv', 'list/z.csv', 'prefix:list/sub/'].sort());
  });
});
