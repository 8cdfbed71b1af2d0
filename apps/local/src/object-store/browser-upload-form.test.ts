import { request } from 'node:http';
import { Readable } from 'node:stream';
import { freezeClock, now } from '@svc/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ObjectStore, startObjectStore } from './server';
import { signPolicy } from './sigv4';

/** The multipart form itself: field order and case, success statuses, malformed bodies, huge files. */
let store: ObjectStore;
let created = 0;

beforeAll(async () => {
  store = await startObjectStore({
    dataDir: ':memory:',
    buckets: ['uploads'],
    credentials: { local: 'local' },
    now,
    onObjectCreated: () => {
      created += 1;
    },
  });
});

afterAll(() => store.close());

const amzDate = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/[-:]|\.\d{3}/g, '');

/** A form signed like createPresignedPost signs one, from explicit conditions. */
function signedFields(conditions: unknown[] = [], policyText?: string): Record<string, string> {
  const date = amzDate(now());
  const credential = `local/${date.slice(0, 8)}/eu-central-2/s3/aws4_request`;
  const expiration = new Date((now() + 900) * 1000).toISOString();
  const policy = Buffer.from(
    policyText ??
      JSON.stringify({
        expiration,
        conditions: [
          { bucket: 'uploads' },
          ['starts-with', '$key', 'in/'],
          ['content-length-range', 1, 1024],
          { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' },
          { 'x-amz-credential': credential },
          { 'x-amz-date': date },
          ...conditions,
        ],
      }),
  ).toString('base64');
  return {
    key: 'in/file.csv',
    'x-amz-algorithm': 'AWS4-HMAC-SHA256',
    'x-amz-credential': credential,
    'x-amz-date': date,
    policy,
    'x-amz-signature': signPolicy(policy, 'local', date.slice(0, 8), 'eu-central-2', 's3'),
  };
}

async function post(fields: Record<string, string>, file?: Blob, after: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', file, 'file.csv');
  for (const [name, value] of Object.entries(after)) form.append(name, value);
  const response = await fetch(`${store.url}/uploads`, { method: 'POST', body: form });
  const body = await response.text();
  return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1], body };
}

const file = new Blob(['a;b\n']);

describe('browser POST form handling', () => {
  it('reads field names in any case, as S3 does', async () => {
    const fields = Object.fromEntries(
      Object.entries(signedFields()).map(([name, value]) => [name.toUpperCase(), value]),
    );
    expect((await post(fields, file)).status).toBe(204);
  });

  it('ignores fields after the file', async () => {
    const result = await post(signedFields(), file, { 'x-amz-meta-late': 'ignored', key: 'elsewhere/x' });
    expect(result.status).toBe(204);
    const head = await fetch(`${store.url}/uploads/in/file.csv`, { method: 'HEAD' });
    expect(head.headers.get('x-amz-meta-late')).toBeNull();
  });

  it('answers 200 with an empty body when success_action_status is 200', async () => {
    const result = await post(
      { ...signedFields([{ success_action_status: '200' }]), success_action_status: '200' },
      file,
    );
    expect({ status: result.status, body: result.body }).toEqual({ status: 200, body: '' });
  });

  it.each([
    [
      'a signed policy that is not JSON',
      () => post(signedFields([], '{"expiration": '), file),
      400,
      'InvalidPolicyDocument',
    ],
    [
      'a policy dated later than now',
      () => {
        const fields = signedFields();
        freezeClock(now() - 3600);
        return post(fields, file);
      },
      403,
      'AccessDenied',
    ],
    [
      'an unknown access key',
      () =>
        post(
          {
            ...signedFields(),
            'x-amz-credential': signedFields()['x-amz-credential']?.replace('local/', 'nobody/') ?? '',
          },
          file,
        ),
      403,
      'InvalidAccessKeyId',
    ],
    ['a form without a file', () => post(signedFields()), 400, 'InvalidArgument'],
    [
      'a body that is not multipart',
      async () => {
        const response = await fetch(`${store.url}/uploads`, {
          method: 'POST',
          body: new URLSearchParams(signedFields()),
        });
        return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1] };
      },
      412,
      'PreconditionFailed',
    ],
    [
      'a malformed multipart body',
      async () => {
        const response = await fetch(`${store.url}/uploads`, {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
          body: '--x\r\nContent-Disposition: form-data; name="key"\r\n\r\nin/a',
        });
        return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1] };
      },
      400,
      'MalformedPOSTRequest',
    ],
    [
      'a form cut off after its file',
      async () => {
        const parts = Object.entries({ ...signedFields(), key: 'in/cut-off.csv' }).map(
          ([name, value]) => `--x\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
        );
        const file = '--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\na;b\r\n';
        const cut = '--x\r\nContent-Disposition: form-data; name="x-ignore-tail"\r\n\r\nno closing boundary';
        const response = await fetch(`${store.url}/uploads`, {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
          body: parts.join('') + file + cut,
        });
        const head = await fetch(`${store.url}/uploads/in/cut-off.csv`, { method: 'HEAD' });
        expect(head.status).toBe(404);
        return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1] };
      },
      400,
      'MalformedPOSTRequest',
    ],
  ])('refuses %s', async (_, attempt, status, code) => {
    const before = created;
    const result = await attempt();
    expect({ status: result.status, code: result.code }).toEqual({ status, code });
    expect(created).toBe(before);
  });

  it.each([
    ['too large for its policy', {}],
    ['refused by its signature', { 'x-amz-signature': '0'.repeat(64) }],
  ])('stops reading a huge file %s instead of taking it all in', async (_, override) => {
    const total = 512 * 1024 * 1024;
    const { sent, status } = await streamHugeUpload({ ...signedFields(), ...override }, total);
    expect(sent).toBeLessThan(total / 4);
    expect([400, 403, undefined]).toContain(status);
    const listing = await fetch(`${store.url}/uploads?list-type=2&prefix=in/huge`);
    expect(await listing.text()).not.toContain('<Key>');
  });
});

/** Posts fields and then a file of `total` zero bytes made on demand; resolves when the server answers or hangs up. */
function streamHugeUpload(fields: Record<string, string>, total: number): Promise<{ sent: number; status?: number }> {
  const boundary = 'huge-upload-boundary';
  const head = Object.entries({ ...fields, key: 'in/huge.bin' })
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('');
  const fileHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n`;
  const chunk = Buffer.alloc(64 * 1024);
  let sent = 0;
  const body = new Readable({
    read() {
      if (sent === 0) this.push(head + fileHead);
      if (sent >= total) {
        this.push(`\r\n--${boundary}--\r\n`);
        this.push(null);
        return;
      }
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return new Promise((resolve) => {
    const req = request(`${store.url}/uploads`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('response', (response) => {
      response.resume();
      resolve({ sent, status: response.statusCode });
      body.destroy();
    });
    req.on('error', () => resolve({ sent }));
    body.pipe(req);
  });
}
