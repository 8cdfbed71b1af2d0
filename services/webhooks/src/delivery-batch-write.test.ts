import { advanceClock, definedFields, freezeClock, now } from '@svc/core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';

/**
 * The worker writes a batch's Webhook Responses in one BatchWriteItem. When that call fails, the
 * deliveries must not be lost or sent again needlessly: each response is written on its own, and
 * every delivery whose response was written is settled. Here the batch write always fails.
 */
const batchWrites = vi.hoisted(() => ({ calls: 0 }));
vi.mock('@svc/table', async (importOriginal) => {
  const table = await importOriginal<typeof import('@svc/table')>();
  return {
    ...table,
    putItems: async () => {
      batchWrites.calls += 1;
      throw new Error('BatchWriteItem left 3 items unprocessed after retries');
    },
  };
});

let token: string;
let receiver: Receiver;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('thanks');
  }, inject('receiverTls'));
});

beforeEach(() => {
  freezeClock(now());
});

afterAll(async () => {
  await receiver.close();
});

async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await call(method, path, { token, ...definedFields({ body }) });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

describe('when the batch write of Webhook Responses fails', () => {
  it('writes each response on its own and settles every delivery: nothing is sent twice', async () => {
    const webhook = await ok(
      'POST',
      '/webhooks',
      { organisation_uuid: DEMO.org, endpoint: `https://127.0.0.1:${receiver.port}/one-by-one` },
      201,
    );
    await ok(
      'POST',
      '/event-subscriptions',
      {
        organisation_uuid: DEMO.org,
        action_configuration_uuid: webhook.uuid,
        action_type: 'webhook',
        event_name: 'svc.payments.payment.succeeded',
      },
      201,
    );
    for (let i = 0; i < 5; i++) {
      await ok(
        'POST',
        '/payments',
        {
          account_uuid: DEMO.secondAccount,
          payment_method: 'card',
          profile: 'card',
          amount: { value: '900', currency: 'CHF' },
          payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
        },
        201,
      );
    }
    await ok('POST', '/_local/settle');
    expect(batchWrites.calls).toBeGreaterThan(0);
    expect(receiver.requests).toHaveLength(5);
    const listed = await ok(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`,
    );
    expect(listed).toHaveLength(5);
    // Every delivery was settled: once the leases would have lapsed (60 s), nothing is sent again.
    advanceClock(120);
    await ok('POST', '/_local/settle');
    expect(receiver.requests).toHaveLength(5);
    expect(
      await ok('GET', `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`),
    ).toHaveLength(5);
  });
});
