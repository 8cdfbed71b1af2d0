import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { advanceClock, now } from '@svc/core';
import type { S3EventRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ObjectStore, startObjectStore } from './server';

/**
 * Browser-style uploads against the local store, with parameters made by the AWS SDK's own
 * `createPresignedPost` (as the upload-parameters endpoint makes them) and sent by fetch.
 */
const PREFIX = 'org-1/config-1/';
const FILE_KEY = ['org-1/config-1/$', '{filename}'].join('');
let store: ObjectStore;
let s3: S3Client;
const records: S3EventRecord[] = [];

const clientWith = (secretAccessKey: string) =>
  new S3Client({
    endpoint: store.url,
    forcePathStyle: true,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey },
  });

beforeAll(async () => {
  store = await startObjectStore({
    dataDir: ':memory:',
    buckets: ['uploads', 'other-bucket'],
    credentials: { local: 'local' },
    now,
    region: 'eu-central-2',
    onObjectCreated: (record) => {
      records.push(record);
    },
  });
  s3 = clientWith('local');
});

afterAll(async () => {
  s3.destroy();
  await store.close();
});

beforeEach(() => {
  records.length = 0;
});

function presign(client = s3, key = FILE_KEY) {
  return createPresignedPost(client, {
    Bucket: 'uploads',
    Key: key,
    Conditions: [['content-length-range', 1, 1024]],
    Expires: 15 * 60,
  });
}

type Post = Awaited<ReturnType<typeof presign>>;

async function upload(
  post: Post,
  file: Blob,
  options: { filename?: string; extra?: Record<string, string>; url?: string } = {},
) {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...post.fields, ...options.extra })) form.append(name, value);
  form.append('file', file, options.filename ?? 'statement.csv');
  const response = await fetch(options.url ?? post.url, { method: 'POST', body: form });
  return { status: response.status, body: await response.text() };
}

/** An upload that is meant to be refused: its file name is used by no accepted upload. */
function refuse(post: Post, file: Blob, options: { extra?: Record<string, string>; url?: string } = {}) {
  return upload(post, file, { ...options, filename: 'refused.csv' });
}

async function storedKeys(bucket: string): Promise<string[]> {
  const listing = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listing.Contents ?? []).map((object) => object.Key ?? '');
}

const csv = new Blob(['reference;amount\nR-1;10.00\n'], { type: 'text/csv' });
const errorCode = (body: string) => /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
const errorMessage = (body: string) => /<Message>([^<]*)<\/Message>/.exec(body)?.[1]?.replaceAll('&quot;', '"');

describe('browser POST uploads', () => {
  it('stores a good upload, returns its bytes and announces it once', async () => {
    const post = await presign();
    expect(post.url).toBe(`${store.url}/uploads`);

    const result = await upload(post, csv);

    expect(result.status).toBe(204);
    const object = await s3.send(new GetObjectCommand({ Bucket: 'uploads', Key: `${PREFIX}statement.csv` }));
    expect(await object.Body?.transformToString()).toBe('reference;amount\nR-1;10.00\n');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Post',
      awsRegion: 'eu-central-2',
      s3: { bucket: { name: 'uploads' }, object: { key: `${PREFIX}statement.csv`, size: csv.size } },
    });
  });

  it('URL-encodes the key in the notification as S3 does', async () => {
    const result = await upload(await presign(), csv, { filename: 'bank statement (März).csv' });
    expect(result.status).toBe(204);
    const key = records[0]?.s3.object.key ?? '';
    expect(key).toBe('org-1/config-1/bank+statement+%28M%C3%A4rz%29.csv');
    expect(decodeURIComponent(key.replace(/\+/g, ' '))).toBe(`${PREFIX}bank statement (März).csv`);
  });

  it('answers 201 with a PostResponse document when success_action_status asks for it', async () => {
    const post = await createPresignedPost(s3, {
      Bucket: 'uploads',
      Key: FILE_KEY,
      Conditions: [['content-length-range', 1, 1024]],
      Fields: { success_action_status: '201' },
      Expires: 900,
    });
    const result = await upload(post, csv, { filename: 'created.csv' });
    expect(result.status).toBe(201);
    expect(result.body).toContain(`<Key>${PREFIX}created.csv</Key>`);
    expect(result.body).toContain('<Bucket>uploads</Bucket>');
  });

  describe('refusals store nothing and announce nothing', () => {
    const refusals: [string, () => Promise<{ status: number; body: string }>, number, string, string?][] = [
      [
        'a tampered policy (one condition changed, signature kept)',
        async () => {
          const post = await presign();
          const policy = JSON.parse(Buffer.from(post.fields.Policy ?? '', 'base64').toString('utf8'));
          policy.conditions[0] = ['content-length-range', 1, 1_000_000_000];
          const tampered = Buffer.from(JSON.stringify(policy)).toString('base64');
          return refuse({ ...post, fields: { ...post.fields, Policy: tampered } }, csv);
        },
        403,
        'SignatureDoesNotMatch',
      ],
      [
        'a tampered signature',
        async () => {
          const post = await presign();
          const signature = post.fields['X-Amz-Signature'] ?? '';
          const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
          return refuse({ ...post, fields: { ...post.fields, 'X-Amz-Signature': flipped } }, csv);
        },
        403,
        'SignatureDoesNotMatch',
      ],
      [
        'an expired policy',
        async () => {
          const post = await presign();
          advanceClock(15 * 60 + 1);
          return refuse(post, csv);
        },
        403,
        'AccessDenied',
        'Invalid according to Policy: Policy expired.',
      ],
      [
        'a key outside the prefix',
        async () => refuse(await presign(), csv, { extra: { key: 'org-2/config-1/statement.csv' } }),
        403,
        'AccessDenied',
        `Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "${PREFIX}"]`,
      ],
      [
        'an oversized file',
        async () => refuse(await presign(), new Blob([new Uint8Array(1025)])),
        400,
        'EntityTooLarge',
      ],
      [
        'an empty file when the minimum is 1 byte',
        async () => refuse(await presign(), new Blob([])),
        400,
        'EntityTooSmall',
      ],
      [
        'an extra form field the policy does not name',
        async () => refuse(await presign(), csv, { extra: { 'x-amz-meta-origin': 'elsewhere' } }),
        403,
        'AccessDenied',
        'Invalid according to Policy: Extra input fields: x-amz-meta-origin',
      ],
      [
        'a different bucket',
        async () => refuse(await presign(), csv, { url: `${store.url}/other-bucket` }),
        403,
        'AccessDenied',
        'Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "uploads"]',
      ],
      [
        'a policy signed with the wrong secret',
        async () => refuse(await presign(clientWith('wrong')), csv),
        403,
        'SignatureDoesNotMatch',
      ],
      [
        'a form without its key field',
        async () => {
          const { key: _key, ...fields } = (await presign()).fields;
          return refuse({ url: `${store.url}/uploads`, fields }, csv);
        },
        400,
        'InvalidArgument',
      ],
    ];

    it.each(refusals)('refuses %s', async (_, attempt, status, code, message) => {
      const before = { uploads: await storedKeys('uploads'), other: await storedKeys('other-bucket') };
      const result = await attempt();
      expect({ status: result.status, code: errorCode(result.body) }).toEqual({ status, code });
      if (message) expect(errorMessage(result.body)).toBe(message);
      expect({ uploads: await storedKeys('uploads'), other: await storedKeys('other-bucket') }).toEqual(before);
      expect(before.uploads).not.toContain(`${PREFIX}refused.csv`);
      expect(records).toEqual([]);
    });
  });
});
