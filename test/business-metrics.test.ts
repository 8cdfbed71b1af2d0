import { freezeClock, now } from '@svc/core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../packages/outbound/src/testing/receiver';
import { RETRY_DELAYS_SECONDS } from '../services/webhooks/src/domain/delivery';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * Business metrics are CloudWatch EMF lines on stdout (Powertools Metrics): a payment's outcome,
 * a refund and the webhook deliveries, counted where AWS counts them, through the same stream
 * publisher and delivery worker, read back from the lines they print.
 */
interface EmfLine {
  _aws: {
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [key: string]: unknown;
}

let token: string;
let receiver: Receiver;
let printed: string[] = [];

beforeAll(async () => {
  await seedDemo();
  freezeClock(Math.floor(Date.now() / 1000));
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((_request, response) => response.writeHead(200).end('ok'), inject('receiverTls'));
});

afterAll(async () => {
  await receiver.close();
});

afterEach(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  vi.restoreAllMocks();
});

/** Turns the metrics on (the test run has them off) and keeps the EMF lines printed from now on. */
function capture(): void {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  printed = [];
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.includes('"CloudWatchMetrics"')) {
      printed.push(...text.split('\n').filter((line) => line.includes('"CloudWatchMetrics"')));
      return true;
    }
    return write(chunk, ...(rest as []));
  });
}

/** Each printed metric as { name, value, unit, dimensions }. */
function metrics() {
  return printed.flatMap((line) => {
    const emf = JSON.parse(line) as EmfLine;
    return emf._aws.CloudWatchMetrics.flatMap((directive) =>
      directive.Metrics.map((metric) => ({
        namespace: directive.Namespace,
        name: metric.Name,
        unit: metric.Unit,
        value: emf[metric.Name],
        dimensions: Object.fromEntries((directive.Dimensions[0] ?? []).map((key) => [key, emf[key]])),
      })),
    );
  });
}

const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const response = await call(method, path, { token, body });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
};

/** A webhook endpoint at `url` subscribed to one event. */
async function subscribe(url: string, eventName: string, fields: Record<string, unknown> = {}): Promise<void> {
  const endpoint = await ok('POST', '/webhooks', { organisation_uuid: DEMO.org, endpoint: url, ...fields }, 201);
  await ok(
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: endpoint.uuid,
      action_type: 'webhook',
      event_name: eventName,
    },
    201,
  );
}

describe('business metrics (EMF)', () => {
  it('print nothing while POWERTOOLS_METRICS_DISABLED is true', async () => {
    capture();
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    await ok('POST', '/payments', cardPaymentBody(), 201);
    await ok('POST', '/_local/settle');
    expect(printed).toEqual([]);
  });

  it('count payment outcomes by mode and method, refunds, and webhook deliveries with their lag', async () => {
    await subscribe(`https://127.0.0.1:${receiver.port}/metrics`, 'svc.payments.payment.succeeded');
    await ok('POST', '/_local/settle');
    capture();
    // The event's time, fixed: a second that passes while the calls below run is no lag of delivery.
    const start = now();
    freezeClock(start);
    const paid = await ok('POST', '/payments', cardPaymentBody({ amount: { value: '2500', currency: 'CHF' } }), 201);
    await ok(
      'POST',
      '/payments',
      cardPaymentBody({
        test_mode: true,
        payment_information: { number: '4000000000000002', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      }),
      201,
    );
    await ok('POST', `/payments/${paid.uuid}/refunds`, { amount: { value: '500', currency: 'CHF' } });
    freezeClock(start + 3);
    await ok('POST', '/_local/settle');

    const seen = metrics();
    // The stage's own namespace (locally `svc/local`): another stage never feeds its alarms.
    expect(seen.every((m) => m.namespace === 'svc/local' && m.dimensions.service === 'svc')).toBe(true);
    const find = (name: string, dimensions: Record<string, string> = {}) =>
      seen.filter(
        (m) => m.name === name && Object.entries(dimensions).every(([key, value]) => m.dimensions[key] === value),
      );
    expect(find('PaymentOutcomes', { outcome: 'succeeded', mode: 'live' })).toHaveLength(1);
    expect(find('PaymentOutcomes', { outcome: 'failed', mode: 'test' })).toHaveLength(1);
    expect(find('PaymentOutcomesByMethod', { outcome: 'succeeded', mode: 'live', payment_method: 'card' })).toEqual([
      expect.objectContaining({ value: 1, unit: 'Count' }),
    ]);
    expect(find('Refunds')).toEqual([expect.objectContaining({ value: 1, unit: 'Count' })]);
    // One delivery (only payment.succeeded is subscribed), on its first attempt, 3 s after the event.
    expect(find('WebhookDeliveries', { outcome: 'delivered' })).toHaveLength(1);
    expect(find('EventToDeliveryLag')).toEqual([expect.objectContaining({ value: 3, unit: 'Seconds' })]);
  });

  it('count a failed first attempt as failed, with its lag; a retry adds none and shows in the sweep’s backlog from its due time', async () => {
    const failing = await startReceiver(
      (_request, response) => response.writeHead(500).end('no'),
      inject('receiverTls'),
    );
    try {
      await subscribe(`https://127.0.0.1:${failing.port}/failing`, 'svc.payments.refund.succeeded');
      const paid = await ok('POST', '/payments', cardPaymentBody(), 201);
      await ok('POST', '/_local/settle');
      const start = now();
      freezeClock(start);
      capture();
      await ok('POST', `/payments/${paid.uuid}/refunds`);
      freezeClock(start + 4);
      await ok('POST', '/_local/settle');
      let seen = metrics();
      expect(seen.filter((m) => m.name === 'WebhookDeliveries').map((m) => m.dimensions.outcome)).toEqual(['failed']);
      // The receiver waited 4 s for the event, whatever came of it (issue 46: lag not only on success).
      expect(seen.filter((m) => m.name === 'EventToDeliveryLag')).toEqual([
        expect.objectContaining({ value: 4, unit: 'Seconds' }),
      ]);
      // The retry falls due 60 s after the attempt; the sweep finds it 15 s late.
      capture();
      freezeClock(start + 4 + RETRY_DELAYS_SECONDS[0] + 15);
      await ok('POST', '/_local/settle');
      seen = metrics();
      expect(seen.filter((m) => m.name === 'WebhookDeliveries').map((m) => m.dimensions.outcome)).toEqual(['failed']);
      expect(seen.filter((m) => m.name === 'EventToDeliveryLag')).toEqual([]);
      const swept = seen.filter((m) => m.name === 'WebhookBacklog' && (m.value as number) > 0);
      expect(swept).toEqual([expect.objectContaining({ value: 1, unit: 'Count' })]);
      expect(Math.max(...seen.filter((m) => m.name === 'WebhookBacklogAge').map((m) => m.value as number))).toBe(15);
    } finally {
      await failing.close();
    }
  });

  it('show a paced endpoint’s backlog: deliveries held back count as paced, and arrive with their wait as lag', async () => {
    await subscribe(`https://127.0.0.1:${receiver.port}/paced`, 'svc.payments.payment.failed', {
      max_deliveries_per_second: 2,
    });
    await ok('POST', '/_local/settle');
    const start = now();
    freezeClock(start);
    const declined = { number: '4000000000000002', expiry_month: 12, expiry_year: 2099, cvv: '123' };
    for (let i = 0; i < 5; i++) {
      await ok('POST', '/payments', cardPaymentBody({ test_mode: true, payment_information: declined }), 201);
    }
    capture();
    for (let second = 0; second < 3; second++) {
      await ok('POST', '/_local/settle');
      freezeClock(start + second + 1);
    }
    const seen = metrics();
    const outcomes = seen.filter((m) => m.name === 'WebhookDeliveries').map((m) => m.dimensions.outcome);
    expect(outcomes.filter((o) => o === 'delivered')).toHaveLength(5);
    // Three held back the first second (their reservations kept them from asking again).
    expect(outcomes.filter((o) => o === 'paced')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'failed')).toEqual([]);
    // Two a second: the backlog is the lag, 0, 1 and 2 seconds at delivery, and 0 for the three
    // held the first second (the lag is told at a hold too).
    const lags = seen.filter((m) => m.name === 'EventToDeliveryLag').map((m) => m.value);
    expect(lags.sort()).toEqual([0, 0, 0, 0, 0, 1, 1, 2]);
    // The sweeps took the held ones from the table when their seconds came: two waiting 1 s, then
    // one waiting 2 s since its event (no attempt had failed), every sweep reporting (0 when none).
    const backlog = seen.filter((m) => m.name === 'WebhookBacklog');
    expect(backlog.length).toBeGreaterThanOrEqual(3);
    expect(backlog.map((m) => m.value).filter((count) => (count as number) > 0)).toEqual([2, 1]);
    const ages = seen.filter((m) => m.name === 'WebhookBacklogAge');
    expect(ages.every((m) => m.unit === 'Seconds')).toBe(true);
    expect(ages.map((m) => m.value).filter((age) => (age as number) > 0)).toEqual([1, 2]);
    expect(receiver.requests.filter((r) => r.url === '/paced')).toHaveLength(5);
  });
});
