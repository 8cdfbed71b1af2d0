import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableWindows, WINDOW_SHARDS } from '@svc/http';
import { db, tableName } from '@svc/table';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, cardPaymentBody, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * Per-caller limits through the local runtime, with the stage config's kind of limits made tiny:
 * a client over its limit gets 429 in the contract's Nested shape with `Retry-After`, and other
 * clients are not affected; the token route is limited per source address. How the instances
 * share their counts is proved in packages/http (middleware/rate-limit.test.ts), with a clock.
 */
const saved = {
  client: process.env.SVC_CLIENT_RATE_LIMIT,
  credentials: process.env.SVC_CREDENTIALS_RATE_LIMIT,
  address: process.env.SVC_ADDRESS_RATE_LIMIT,
  publicRead: process.env.SVC_PUBLIC_READ_RATE_LIMIT,
};
let token: string;
let otherToken: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  otherToken = await tokenFor(DEMO.otherClient);
});

afterAll(() => {
  process.env.SVC_CLIENT_RATE_LIMIT = saved.client;
  process.env.SVC_CREDENTIALS_RATE_LIMIT = saved.credentials;
  restore('SVC_ADDRESS_RATE_LIMIT', saved.address);
  restore('SVC_PUBLIC_READ_RATE_LIMIT', saved.publicRead);
});

function restore(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Sends until the first 429 (a burst of 3 is spent in 4; a new second may grant one more burst). */
async function untilRefused(send: () => Promise<ApiResponse>): Promise<{ admitted: number; refused: ApiResponse }> {
  for (let sent = 0; sent < 20; sent += 1) {
    const answer = await send();
    if (answer.status === 429) return { admitted: sent, refused: answer };
    expect(answer.status, answer.text).toBeLessThan(400);
  }
  throw new Error('never refused');
}

function expectTooManyRequests(answer: ApiResponse) {
  expect(answer.status).toBe(429);
  expect(answer.headers['retry-after']).toBe('1');
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.json).toEqual({
    request_id: expect.any(String),
    error: {
      http_code: 429,
      code: 'too_many_requests',
      message: [{ code: 'error.rate_limited', property: '', message: expect.stringMatching(/limit is 1 a second/) }],
    },
  });
}

describe('a client over its limit', () => {
  it('gets 429 with Retry-After, and another client does not', async () => {
    process.env.SVC_CLIENT_RATE_LIMIT = '1/3';
    try {
      const { admitted, refused } = await untilRefused(() => call('GET', '/organisations', { token }));
      expect(admitted).toBeGreaterThanOrEqual(3);
      expectTooManyRequests(refused);
      // The other client's count is its own.
      expect((await call('GET', '/organisations', { token: otherToken })).status).toBe(200);
    } finally {
      process.env.SVC_CLIENT_RATE_LIMIT = saved.client;
    }
  });

  it('changes nothing when refused: the same Idempotency-Key then creates the payment afresh', async () => {
    const body = cardPaymentBody({ amount: { value: '500', currency: 'CHF' } });
    const key = `rate-limited-${Date.now()}`;
    const pay = () => call('POST', '/payments', { token, body, headers: { 'idempotency-key': key } });
    process.env.SVC_CLIENT_RATE_LIMIT = '1/1';
    let refused: ApiResponse | undefined;
    try {
      // Spend the burst, then pay at once (again if a new second granted a new burst in between).
      for (let attempt = 0; attempt < 5 && !refused; attempt += 1) {
        await untilRefused(() => call('GET', '/organisations', { token }));
        const answer = await pay();
        if (answer.status === 429) refused = answer;
        else expect(answer.status, answer.text).toBe(201);
      }
    } finally {
      process.env.SVC_CLIENT_RATE_LIMIT = saved.client;
    }
    expect(refused?.status).toBe(429);
    const created = await pay();
    expect(created.status, created.text).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('the token route', () => {
  it('is limited per source address: one address is refused, another is not', async () => {
    process.env.SVC_CREDENTIALS_RATE_LIMIT = '1/3';
    try {
      const ask = (sourceIp: string) =>
        call('POST', '/oauth2/token', {
          sourceIp,
          body: { grant_type: 'client_credentials', client_id: DEMO.client.id, client_secret: DEMO.client.secret },
        });
      const { admitted, refused } = await untilRefused(() => ask('203.0.113.7'));
      expect(admitted).toBeGreaterThanOrEqual(3);
      expectTooManyRequests(refused);
      expect((await ask('203.0.113.8')).status).toBe(200);
    } finally {
      process.env.SVC_CREDENTIALS_RATE_LIMIT = saved.credentials;
    }
  });
});

describe('the shared counts in the table', () => {
  it('spread a caller’s second over its shard keys, each second its own, and add them all up on read', async () => {
    const caller = `client:heat-${Date.now()}`;
    const second = 1_800_000_000;
    // Eight containers, each on its shard: the items of that second are summed, another second's are not.
    await Promise.all(
      Array.from({ length: WINDOW_SHARDS }, (_, shard) =>
        db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: `RATE_LIMIT#${caller}#${second}#${shard}`, sk: 'WINDOW' },
            UpdateExpression: 'ADD admitted :n, instances :one',
            ExpressionAttributeValues: { ':n': shard + 1, ':one': 1 },
          }),
        ),
      ),
    );
    await tableWindows.add(caller, second + 1, 100);
    expect(await tableWindows.total(caller, second)).toEqual({ admitted: 36, instances: 8 });
    // This container's add went to one shard of its own second only.
    await tableWindows.add(caller, second, 5);
    expect(await tableWindows.total(caller, second)).toEqual({ admitted: 41, instances: 9 });
    expect(await tableWindows.total(caller, second + 1)).toEqual({ admitted: 100, instances: 1 });
  });
});

describe('the routes without a token', () => {
  const existence = (sourceIp: string) =>
    call('GET', '/onboarding/users/nobody%40example.ch/existence?recaptcha_token=test-captcha-ok', { sourceIp });

  it('are limited per address by default, with no variable set', async () => {
    delete process.env.SVC_ADDRESS_RATE_LIMIT;
    // The default burst (60) admits a page's worth at once; a script's hundreds are refused.
    const answers = await Promise.all(Array.from({ length: 150 }, () => existence('198.51.100.77')));
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 404).length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]?.json.error.code).toBe('too_many_requests');
  });

  it('count an IPv6 caller by its /64: another host of the same /64 is refused, another /64 is not', async () => {
    process.env.SVC_PUBLIC_READ_RATE_LIMIT = '1/3';
    const health = (sourceIp: string) => call('GET', '/health', { sourceIp });
    try {
      const { admitted, refused } = await untilRefused(() => health('2001:db8:1:2:aaaa::1'));
      expect(admitted).toBeGreaterThanOrEqual(3);
      expectTooManyRequests(refused);
      expect((await health('2001:db8:1:2:bbbb::9')).status).toBe(429);
      expect((await health('2001:db8:1:3::1')).status).toBe(200);
      // Each class counts under its own key: the same /64 still reaches the e-mail check.
      expect((await existence('2001:db8:1:2:cccc::2')).status).toBe(404);
    } finally {
      restore('SVC_PUBLIC_READ_RATE_LIMIT', saved.publicRead);
    }
  });
});

describe('behind the edge (SVC_EDGE_ORIGIN_SECRET set)', () => {
  it('refuses a request without the origin secret (403), and limits by the viewer address, not the edge server', async () => {
    const previous = { secret: process.env.SVC_EDGE_ORIGIN_SECRET, limit: process.env.SVC_PUBLIC_READ_RATE_LIMIT };
    process.env.SVC_EDGE_ORIGIN_SECRET = 'origin-secret-for-the-test';
    process.env.SVC_PUBLIC_READ_RATE_LIMIT = '1/3';
    const edgeServer = '130.176.9.9';
    const viaEdge = (viewer: string) =>
      call('GET', '/health', {
        sourceIp: edgeServer,
        headers: { 'x-svc-origin-verify': 'origin-secret-for-the-test', 'cloudfront-viewer-address': viewer },
      });
    try {
      const bypass = await call('GET', '/health', { sourceIp: '198.51.100.3' });
      expect(bypass.status).toBe(403);
      expect(bypass.json.error).toMatchObject({ http_code: 403, code: 'forbidden' });
      const wrong = await call('GET', '/health', { headers: { 'x-svc-origin-verify': 'guess' } });
      expect(wrong.status).toBe(403);
      const { refused } = await untilRefused(() => viaEdge('198.51.100.20:51000'));
      expectTooManyRequests(refused);
      // Another viewer behind the same edge server is not locked out with it.
      expect((await viaEdge('198.51.100.21:51001')).status).toBe(200);
    } finally {
      restore('SVC_EDGE_ORIGIN_SECRET', previous.secret);
      restore('SVC_PUBLIC_READ_RATE_LIMIT', previous.limit);
    }
  });
});
