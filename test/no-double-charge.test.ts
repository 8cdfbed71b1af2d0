import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { advanceClock, freezeClock, newUuid } from '@svc/core';
import * as table from '@svc/table';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { simulatedProvider } from '../services/payments/src/providers/simulated/simulated-provider';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * A request whose Lambda dies after the provider was called, retried with the same
 * Idempotency-Key once its claim has lapsed, must not create a second resource or a second
 * provider charge. The "crash" holds the first run inside the provider call (a Lambda frozen or
 * killed there never answers); the clock then moves past the claim's lease.
 */
const LEASE_SECONDS = 60;

let token: string;

beforeAll(async () => {
  await seedDemo();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A fresh token on the service clock as it is now (the clock moves in these tests). */
async function startClock(): Promise<void> {
  freezeClock(Math.floor(Date.now() / 1000));
  token = await tokenFor(DEMO.client);
}

function payment(marker: string, extra: Record<string, unknown> = {}) {
  return {
    account_uuid: DEMO.secondAccount,
    payment_method: 'card',
    profile: 'card',
    amount: { value: '2500', currency: 'CHF' },
    payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    custom_parameters: { marker },
    ...extra,
  };
}

function post(path: string, body: unknown, key: string): Promise<ApiResponse> {
  return call('POST', path, { token, body, headers: { 'idempotency-key': key } });
}

/**
 * Makes the next call of a provider operation run for real and then never return until
 * `release` is called: the request is stuck after the provider acted, like a dead Lambda.
 */
function crashAfter<K extends 'authorise' | 'refund' | 'chargeInstrument'>(operation: K) {
  const original = simulatedProvider[operation].bind(simulatedProvider) as (...args: unknown[]) => Promise<unknown>;
  const references: string[] = [];
  let reached: () => void = () => undefined;
  const reachedProvider = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let first = true;
  const spy = vi.spyOn(simulatedProvider, operation).mockImplementation((async (...args: unknown[]) => {
    // authorise(request), refund(reference, amount), chargeInstrument(token, amount, reference)
    const reference = operation === 'chargeInstrument' ? args[2] : args[0];
    references.push(typeof reference === 'string' ? reference : (reference as { reference: string }).reference);
    const answer = await original(...args);
    if (first) {
      first = false;
      reached();
      await gate;
    }
    return answer;
  }) as never);
  return { spy, references, reachedProvider, release };
}

/**
 * Makes the next transactional write land and then never return until `release` is called: the
 * request stored its resource but died before its answer was recorded.
 */
function crashAfterWrite() {
  const transact = table.transactWrite;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let stored: () => void = () => undefined;
  const written = new Promise<void>((resolve) => {
    stored = resolve;
  });
  vi.spyOn(table, 'transactWrite').mockImplementationOnce(async (writes) => {
    await transact(writes);
    stored();
    await gate;
  });
  return { written, release };
}

async function scan(entity: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.db().send(
      new ScanCommand({
        TableName: table.tableName(),
        FilterExpression: 'entity = :entity',
        ExpressionAttributeValues: { ':entity': entity },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Stored payments carrying the marker (a payment item keeps its record as one JSON document). */
const paymentsMarked = async (marker: string) =>
  (await scan('payment'))
    .map((item) => JSON.parse(String(item.document)) as { uuid: string; custom_parameters: { marker?: string } })
    .filter((payment) => payment.custom_parameters.marker === marker);

describe('a payment whose run died after the provider call', () => {
  it('is created once when retried after the lease: same payment, one charge, and the dead run cannot add one', async () => {
    await startClock();
    const key = newUuid();
    const marker = newUuid();
    const crash = crashAfter('authorise');
    const dead = post('/payments', payment(marker), key);
    await crash.reachedProvider;

    // Within the lease the key is still held.
    expect((await post('/payments', payment(marker), key)).status).toBe(409);
    advanceClock(LEASE_SECONDS + 1);
    const retried = await post('/payments', payment(marker), key);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.json.status).toBe('succeeded');

    // The provider was asked twice under one idempotency reference, the payment's uuid: a PSP
    // deduplicates on it, so that is one charge.
    expect(crash.references).toEqual([retried.json.uuid, retried.json.uuid]);

    // The first run wakes up and tries to finish: it cannot store a second payment.
    crash.release();
    expect((await dead).status).not.toBe(201);
    expect((await paymentsMarked(marker)).map((item) => item.uuid)).toEqual([retried.json.uuid]);

    const replay = await post('/payments', payment(marker), key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json.uuid).toBe(retried.json.uuid);
  });

  it('returns the payment its first run stored when that run died before answering, without asking the provider again', async () => {
    await startClock();
    const key = newUuid();
    const marker = newUuid();
    const authorise = vi.spyOn(simulatedProvider, 'authorise');
    const { written, release } = crashAfterWrite();
    const dead = post('/payments', payment(marker), key);
    await written;
    advanceClock(LEASE_SECONDS + 1);

    const retried = await post('/payments', payment(marker), key);
    expect(retried.status, retried.text).toBe(201);
    expect(authorise).toHaveBeenCalledTimes(1);
    expect((await paymentsMarked(marker)).map((item) => item.uuid)).toEqual([retried.json.uuid]);
    release();
    await dead;
    expect(await paymentsMarked(marker)).toHaveLength(1);
  });

  it('resumes at once after a run that failed with a 5xx after the provider call, under the same reference', async () => {
    await startClock();
    const key = newUuid();
    const marker = newUuid();
    const authorise = vi.spyOn(simulatedProvider, 'authorise');
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    const failed = await post('/payments', payment(marker), key);
    expect(failed.status).toBe(500);

    const retried = await post('/payments', payment(marker), key);
    expect(retried.status, retried.text).toBe(201);
    const references = authorise.mock.calls.map(([request]) => request.reference);
    expect(references).toEqual([retried.json.uuid, retried.json.uuid]);
    expect(await paymentsMarked(marker)).toHaveLength(1);
  });

  it('refuses another body on a key whose run failed (422): that run may have charged', async () => {
    await startClock();
    const key = newUuid();
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    expect((await post('/payments', payment(newUuid()), key)).status).toBe(500);
    const other = await post('/payments', payment(newUuid(), { amount: { value: '700', currency: 'CHF' } }), key);
    expect(other.status, other.text).toBe(422);
    expect(other.json.error.message[0].code).toBe('idempotency_key_reused');
  });

  it('keeps the claim of the run that took over: a first run failing late frees nothing', async () => {
    await startClock();
    const key = newUuid();
    const marker = newUuid();
    const first = crashAfter('authorise');
    const dead = post('/payments', payment(marker), key);
    await first.reachedProvider;

    // The retry (B) is held just before its write; the first run's write, later, fails.
    const transact = table.transactWrite;
    let releaseB: () => void = () => undefined;
    const gateB = new Promise<void>((resolve) => {
      releaseB = resolve;
    });
    let reachedB: () => void = () => undefined;
    const bAtWrite = new Promise<void>((resolve) => {
      reachedB = resolve;
    });
    let writes = 0;
    vi.spyOn(table, 'transactWrite').mockImplementation(async (items) => {
      writes += 1;
      if (writes > 1) throw new Error('the first run fails late');
      reachedB();
      await gateB;
      return transact(items);
    });
    advanceClock(LEASE_SECONDS + 1);
    const retry = post('/payments', payment(marker), key);
    await bAtWrite;
    first.release();
    expect((await dead).status).toBe(500);

    // B still holds the claim: a third request waits its turn instead of running beside B.
    const third = await post('/payments', payment(marker), key);
    expect(third.status, third.text).toBe(409);
    releaseB();
    expect((await retry).status).toBe(201);
    expect(await paymentsMarked(marker)).toHaveLength(1);
  });

  it('replays a record written before requests named their resources, and never resumes one', async () => {
    await startClock();
    const { createHash } = await import('node:crypto');
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const body = JSON.stringify(payment(newUuid()));
    const recordKey = (key: string) => ({ pk: `IDEMPOTENCY#${DEMO.client.id}#${sha(key)}`, sk: 'RECORD' });
    const at = Math.floor(Date.now() / 1000);
    const done = newUuid();
    const inFlight = newUuid();
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    for (const [key, status] of [
      [done, 'completed'],
      [inFlight, 'in_progress'],
    ] as const) {
      await table.db().send(
        new PutCommand({
          TableName: table.tableName(),
          Item: {
            ...recordKey(key),
            entity: 'idempotency_record',
            status,
            fingerprint: sha(`POST\n/payments?\n${body}`),
            lock_expires_at: at - 1,
            expires_at: at + 3600,
            ...(status === 'completed'
              ? {
                  response: {
                    statusCode: 201,
                    headers: { 'content-type': 'application/json' },
                    body: '{"legacy":true}',
                  },
                }
              : {}),
          },
        }),
      );
    }
    const send = (key: string) =>
      call('POST', '/payments', {
        token,
        rawBody: body,
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        planted: true,
      });
    const replay = await send(done);
    expect(replay.status).toBe(201);
    expect(replay.json).toEqual({ legacy: true });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await send(inFlight)).status).toBe(409);
  });
});

describe('a refund whose run died after the provider call', () => {
  it('is refunded once when retried after the lease', async () => {
    await startClock();
    const paid = await post('/payments', payment(newUuid()), newUuid());
    expect(paid.status).toBe(201);
    const key = newUuid();
    const path = `/payments/${paid.json.uuid}/refunds`;
    const body = { amount: { value: '1000', currency: 'CHF' } };
    const crash = crashAfter('refund');
    const dead = post(path, body, key);
    await crash.reachedProvider;
    advanceClock(LEASE_SECONDS + 1);

    const retried = await post(path, body, key);
    expect(retried.status, retried.text).toBe(200);
    expect(crash.references).toEqual([retried.json.uuid, retried.json.uuid]);
    crash.release();
    await dead;

    const read = await call('GET', `/payments/${paid.json.uuid}`, { token });
    expect(read.json.refunded_amount.value).toBe('1000');
    expect(read.json.refunds.map((refund: { uuid: string }) => refund.uuid)).toEqual([retried.json.uuid]);
  });
});

describe('a payment source whose run died after the provider call', () => {
  it('is created once, with one verification charge', async () => {
    await startClock();
    const key = newUuid();
    const crash = crashAfter('authorise');
    const body = payment(newUuid());
    const dead = post('/payment-sources', body, key);
    await crash.reachedProvider;
    advanceClock(LEASE_SECONDS + 1);

    const retried = await post('/payment-sources', body, key);
    expect(retried.status, retried.text).toBe(201);
    expect(crash.references).toEqual([retried.json.uuid, retried.json.uuid]);
    crash.release();
    await dead;
    const sources = (await scan('payment_source')).filter(
      (item) => (item.custom_parameters as { marker?: string })?.marker === body.custom_parameters.marker,
    );
    expect(sources.map((item) => item.uuid)).toEqual([retried.json.uuid]);
  });
});

describe('a charge attempt whose run died after the provider call', () => {
  it('is continued by the retry, not opened again: one attempt, one charge', async () => {
    await startClock();
    const source = await post('/payment-sources', payment(newUuid()), newUuid());
    const supporter = await post('/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' }, newUuid());
    const subscription = await post(
      '/subscriptions',
      {
        account_uuid: DEMO.secondAccount,
        payment_source_uuid: source.json.uuid,
        supporter_uuid: supporter.json.uuid,
        currency: 'CHF',
        amount: 900,
        recurring_interval: 'monthly',
      },
      newUuid(),
    );
    expect(subscription.status, subscription.text).toBe(201);
    const invoice = await post(`/subscriptions/${subscription.json.uuid}/invoices`, {}, newUuid());
    expect(invoice.status, invoice.text).toBe(201);
    const path = `/subscriptions/${subscription.json.uuid}/invoices/${invoice.json.uuid}/charge-attempts`;
    const key = newUuid();
    const crash = crashAfter('chargeInstrument');
    const dead = post(path, undefined, key);
    await crash.reachedProvider;
    advanceClock(LEASE_SECONDS + 1);

    const retried = await post(path, undefined, key);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.json.status).toBe('succeeded');
    expect(crash.references).toEqual([retried.json.uuid, retried.json.uuid]);
    crash.release();
    await dead;
    const read = await call('GET', `/subscriptions/${subscription.json.uuid}/invoices/${invoice.json.uuid}`, { token });
    expect(read.json.status).toBe('paid');
    expect(read.json.charge_attempts.map((attempt: { uuid: string }) => attempt.uuid)).toEqual([retried.json.uuid]);
  });
});

describe('other creating POSTs re-run after their run died', () => {
  it.each([
    ['supporter', '/supporters', () => ({ organisation_uuid: DEMO.org, first_name: 'Ada', last_name: newUuid() })],
    [
      'webhook endpoint',
      '/webhooks',
      () => ({ organisation_uuid: DEMO.org, endpoint: `https://hooks.example.org/${newUuid()}` }),
    ],
    ['subscription plan', '/subscription-plans', () => ({ organisation_uuid: DEMO.org, name: `plan ${newUuid()}` })],
  ])('a %s is created once', async (_kind, path, body) => {
    await startClock();
    const key = newUuid();
    const sent = body();
    const { written, release } = crashAfterWrite();
    const dead = post(path, sent, key);
    await written;
    advanceClock(LEASE_SECONDS + 1);
    const retried = await post(path, sent, key);
    expect(retried.status, retried.text).toBe(201);
    release();
    const late = await dead;
    expect(late.status === 201 ? late.json.uuid : retried.json.uuid).toBe(retried.json.uuid);
    const again = await post(path, sent, key);
    expect(again.json.uuid).toBe(retried.json.uuid);
  });
});
