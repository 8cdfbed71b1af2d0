import { advanceClock, freezeClock, logger, newUuid, now } from '@svc/core';
import {
  CANCELLED_AFTER_SUCCESS,
  forgetProviderHealth,
  OPEN_AFTER,
  PAID_AT_OTHER_PROVIDER,
  UNRECORDED_PAYMENT,
} from '@svc/payments';
import * as table from '@svc/table';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ACCOUNT,
  ADYEN_PROFILES,
  type AdyenHarness,
  adyenCalls,
  adyenCard,
  MERCHANT,
  useAdyen,
  useProfiles,
} from './support/adyen-harness';
import { ADYEN_DECLINE, ADYEN_TEST_CARDS } from './support/adyen-stand-in';
import { call, DEMO, tokenFor } from './support/api';

/**
 * Fail-over between providers (services/payments/src/domain/routing.ts), each rule a test: the
 * `card-route` profile tries Adyen (its stand-in) first and the simulated provider second.
 */
const harness: AdyenHarness = useAdyen();
const { pay, notify, getPayment, api } = adyenCalls(harness);
const routed = (fields: Record<string, unknown> = {}) =>
  pay({ profile: 'card-route', payment_information: adyenCard(ADYEN_TEST_CARDS.visa), ...fields });

beforeAll(() => {
  freezeClock(Math.floor(Date.now() / 1000));
});
afterEach(() => {
  harness.adyen.fault(null);
});

/** Lets the circuit's window and cool-down pass, and closes it with a payment Adyen answers. */
async function closeCircuit() {
  harness.adyen.fault(null);
  advanceClock(60);
  forgetProviderHealth();
  const probe = await routed();
  expect(probe.json.provider, JSON.stringify(probe.json)).toBe('adyen');
}

describe('a payment moves to the next candidate only when the first provably did nothing', () => {
  it('moves when the connection is refused: made once, on the next provider, with the reason kept', async () => {
    harness.adyen.fault('refuse');
    const payment = await routed();
    expect(payment.status, payment.text).toBe(201);
    expect(payment.json).toMatchObject({
      status: 'succeeded',
      provider: 'simulated',
      providers_tried: [{ provider: 'adyen', reason: 'connection_refused' }],
    });
    expect(harness.adyen.byReference(payment.json.uuid)).toEqual([]);
    await closeCircuit();
  });

  it('never moves a payment Adyen rate-limited: Adyen does not say it was not processed (issue 45)', async () => {
    harness.adyen.fault('rate_limit', { times: 1 });
    const payment = await routed();
    // An unknown outcome at Adyen, resolved there: never a second charge elsewhere.
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable', provider: 'adyen' });
    expect(payment.json.providers_tried).toBeUndefined();
    harness.adyen.fault(null);
    expect((await routed()).json.provider).toBe('adyen');
    await closeCircuit();
  });

  it('never moves a payment whose outcome is unknown: it waits at that provider, one charge in all', async () => {
    harness.adyen.fault('lose_answer', { times: 1 });
    const payment = await routed();
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable', provider: 'adyen' });
    expect(payment.json.providers_tried).toBeUndefined();
    // Adyen made it; its notification says so, and the payment settles there.
    expect(harness.adyen.byReference(payment.json.uuid).map((p) => p.status)).toEqual(['authorised']);
    expect((await notify()).text).toBe('[accepted]');
    expect(await getPayment(payment.json.uuid)).toMatchObject({ status: 'succeeded', provider: 'adyen' });
  });

  it('never moves a payment Adyen timed out on, even though nothing was made there', async () => {
    harness.adyen.fault('timeout', { times: 1 });
    const payment = await routed();
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable', provider: 'adyen' });
  });

  it('never moves a decline: it is the donor’s answer', async () => {
    const payment = await routed({ payment_information: adyenCard(ADYEN_TEST_CARDS.visa, ADYEN_DECLINE.holderName) });
    expect(payment.json).toMatchObject({ status: 'failed', provider: 'adyen' });
    expect(payment.json.providers_tried).toBeUndefined();
  });
});

describe('the circuit, shared through the table', () => {
  it('opens after consecutive failures, skips the provider, probes once after the cool-down and closes', async () => {
    advanceClock(60);
    forgetProviderHealth();
    harness.adyen.fault('error');
    for (let i = 0; i < OPEN_AFTER; i++) {
      const payment = await routed();
      // A 5xx is an unknown outcome: it stays at Adyen.
      expect(payment.json).toMatchObject({ status: 'pending', provider: 'adyen' });
    }
    const view = await call('GET', '/_local/providers');
    expect(view.json.providers.find((p: { name: string }) => p.name === 'adyen').circuits).toContainEqual(
      expect.objectContaining({ mode: 'test', state: 'open' }),
    );
    const requestsBefore = harness.adyen.requests.length;
    const skipped = await routed();
    expect(skipped.json).toMatchObject({
      status: 'succeeded',
      provider: 'simulated',
      providers_tried: [{ provider: 'adyen', reason: 'circuit_open' }],
    });
    expect(harness.adyen.requests.length).toBe(requestsBefore);

    // After the cool-down one payment probes Adyen; it answers, and the circuit closes.
    harness.adyen.fault(null);
    advanceClock(31);
    forgetProviderHealth();
    const probe = await routed();
    expect(probe.json).toMatchObject({ status: 'succeeded', provider: 'adyen' });
    const after = await call('GET', '/_local/providers');
    expect(after.json.providers.find((p: { name: string }) => p.name === 'adyen').circuits).toContainEqual(
      expect.objectContaining({ mode: 'test', state: 'closed', failures: 0 }),
    );
  });

  it('claims a probe only for a call it makes: payments that never reach the provider leave its circuit open', async () => {
    advanceClock(60);
    forgetProviderHealth();
    harness.adyen.fault('error');
    for (let i = 0; i < OPEN_AFTER; i++) await routed();
    harness.adyen.fault(null);
    advanceClock(31);
    forgetProviderHealth();
    // Payments taken by the first candidate never ask Adyen's circuit.
    for (let i = 0; i < 3; i++)
      expect((await routed({ profile: 'card-simulated-first' })).json.provider).toBe('simulated');
    const view = await call('GET', '/_local/providers');
    expect(view.json.providers.find((p: { name: string }) => p.name === 'adyen').circuits).toContainEqual(
      expect.objectContaining({ mode: 'test', state: 'open' }),
    );
    // So the next payment that would go to Adyen probes it at once.
    expect((await routed()).json).toMatchObject({ provider: 'adyen', status: 'succeeded' });
  });

  it('reopens at once when the probe fails', async () => {
    advanceClock(60);
    forgetProviderHealth();
    harness.adyen.fault('error');
    for (let i = 0; i < OPEN_AFTER; i++) await routed();
    advanceClock(31);
    forgetProviderHealth();
    const probe = await routed();
    expect(probe.json.provider, JSON.stringify(probe.json)).toBe('adyen');
    const next = await routed();
    expect(next.json.providers_tried).toEqual([{ provider: 'adyen', reason: 'circuit_open' }]);
    harness.adyen.fault(null);
    advanceClock(31);
    await closeCircuit();
  });
});

/** A routed card payment (Adyen first) under an Idempotency-Key: the same request each time. */
const routedWithKey = async (key: string) =>
  call('POST', '/payments', {
    token: await tokenFor(DEMO.client),
    headers: { 'idempotency-key': key },
    body: {
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-route',
      amount: { value: '2500', currency: 'CHF' },
      test_mode: true,
      payment_information: adyenCard(ADYEN_TEST_CARDS.visa),
    },
  });

describe('a request re-run after its first run died', () => {
  it('goes back to the provider the first run called, even when a fresh payment would go elsewhere now', async () => {
    const key = newUuid();
    const post = () => routedWithKey(key);
    // Adyen charges; our write of the payment fails.
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    expect((await post()).status).toBe(500);
    // Adyen is unreachable now: a new payment would go to the simulated provider, this one must not.
    harness.adyen.fault('refuse');
    const retried = await post();
    expect(retried.status, retried.text).toBe(201);
    expect(retried.json).toMatchObject({ provider: 'adyen', status: 'pending', status_reason: 'provider_unavailable' });
    harness.adyen.fault(null);
    // Adyen's notification of the first run's charge settles it: one charge, at Adyen.
    expect((await notify()).text).toBe('[accepted]');
    expect(await getPayment(retried.json.uuid)).toMatchObject({ status: 'succeeded', provider: 'adyen' });
    expect(harness.adyen.byReference(retried.json.uuid)).toHaveLength(1);
    await closeCircuit();
  });
});

describe('a re-run goes only where the first run went, whatever the route is now (issue 45, point 4)', () => {
  it('goes back to the provider and merchant account the first run called after the route was edited to another provider', async () => {
    const key = newUuid();
    const post = () => routedWithKey(key);
    // Adyen charges; our write of the payment fails.
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    expect((await post()).status).toBe(500);
    // The charity edits the route meanwhile: the simulated provider alone.
    const edited = ADYEN_PROFILES.map((profile) =>
      profile.name === 'card-route' ? { ...profile, route: [{ provider: 'simulated' }] } : profile,
    );
    await useProfiles(edited);
    try {
      const retried = await post();
      expect(retried.status, retried.text).toBe(201);
      // Adyen, on the recorded merchant account, under the first run's key: its charge, once.
      expect(retried.json).toMatchObject({ provider: 'adyen', status: 'succeeded' });
      expect(harness.adyen.byReference(retried.json.uuid)).toHaveLength(1);
      expect(harness.adyen.requests.at(-1)).toMatchObject({
        idempotencyKey: `${retried.json.uuid}:payment`,
        body: { merchantAccount: MERCHANT },
      });
    } finally {
      await useProfiles(ADYEN_PROFILES);
    }
  });
});

describe('money a provider reports that is not its to record', () => {
  const authorisation = (reference: string, at: number) => ({
    live: 'false',
    notificationItems: [
      {
        NotificationRequestItem: harness.adyen.sign({
          additionalData: {},
          amount: { currency: 'CHF', value: 2500 },
          eventCode: 'AUTHORISATION',
          eventDate: new Date(at * 1000).toISOString().replace('.000Z', '+00:00'),
          merchantAccountCode: MERCHANT,
          merchantReference: reference,
          pspReference: `P${reference.replace(/-/g, '').slice(0, 15).toUpperCase()}`,
          reason: '',
          success: 'true',
        }),
      },
    ],
  });
  const deliver = (body: unknown) =>
    call('POST', '/providers/adyen/notifications', {
      rawBody: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });

  it('alarms, and changes nothing, when Adyen reports paid a payment recorded at another provider', async () => {
    harness.adyen.fault('refuse');
    const elsewhere = await routed();
    harness.adyen.fault(null);
    expect(elsewhere.json.provider).toBe('simulated');
    const errors = vi.spyOn(logger, 'error');
    expect((await deliver(authorisation(elsewhere.json.uuid, now()))).text).toBe('[accepted]');
    expect(errors).toHaveBeenCalledWith(
      PAID_AT_OTHER_PROVIDER,
      expect.objectContaining({ payment: elsewhere.json.uuid }),
    );
    expect(await getPayment(elsewhere.json.uuid)).toMatchObject({ provider: 'simulated', status: 'succeeded' });
    errors.mockRestore();
    await closeCircuit();
  });

  it('alarms, and keeps the record, when Adyen cancels a payment recorded as paid', async () => {
    const paid = await routed();
    expect(paid.json).toMatchObject({ provider: 'adyen', status: 'succeeded' });
    const [atAdyen] = harness.adyen.byReference(paid.json.uuid);
    const cancelled = authorisation(paid.json.uuid, now()) as {
      notificationItems: Array<{ NotificationRequestItem: Record<string, unknown> }>;
    };
    const [item] = cancelled.notificationItems;
    const cancel = harness.adyen.sign({
      ...item?.NotificationRequestItem,
      eventCode: 'CANCELLATION',
      originalReference: atAdyen?.pspReference,
    });
    const errors = vi.spyOn(logger, 'error');
    expect((await deliver({ live: 'false', notificationItems: [{ NotificationRequestItem: cancel }] })).text).toBe(
      '[accepted]',
    );
    expect(errors).toHaveBeenCalledWith(CANCELLED_AFTER_SUCCESS, expect.objectContaining({ payment: paid.json.uuid }));
    expect(await getPayment(paid.json.uuid)).toMatchObject({ status: 'succeeded' });
    errors.mockRestore();
  });

  it('keeps an AUTHORISATION of a payment not recorded yet (accepted: no 503 to retry), and alarms one that never will be', async () => {
    const reference = newUuid();
    expect((await deliver(authorisation(reference, now()))).text).toBe('[accepted]');
    const errors = vi.spyOn(logger, 'error');
    const late = newUuid();
    expect((await deliver(authorisation(late, now() - 2 * 3600))).text).toBe('[accepted]');
    expect(errors).toHaveBeenCalledWith(UNRECORDED_PAYMENT, expect.objectContaining({ reference: late }));
    expect(errors).not.toHaveBeenCalledWith(UNRECORDED_PAYMENT, expect.objectContaining({ reference }));
    errors.mockRestore();
  });
});

describe('what stays with the provider that holds the payment', () => {
  it('refunds a failed-over payment at the provider that made it, never at another', async () => {
    harness.adyen.fault('refuse');
    const payment = await routed();
    harness.adyen.fault(null);
    expect(payment.json.provider).toBe('simulated');
    const before = harness.adyen.requests.length;
    const refund = await api('POST', `/payments/${payment.json.uuid}/refunds`, {
      amount: { value: '500', currency: 'CHF' },
    });
    expect(refund.status, refund.text).toBe(200);
    expect(harness.adyen.requests.slice(before).filter((r) => r.path.includes('refunds'))).toEqual([]);
    await closeCircuit();
  });
});

describe('the shared limiter', () => {
  it('sends a provider no more than its configured requests a second; the rest go to the next candidate', async () => {
    const configured = process.env.SVC_PROVIDER_RATE_LIMITS;
    process.env.SVC_PROVIDER_RATE_LIMITS = JSON.stringify({ adyen: { test: 4 } });
    try {
      advanceClock(5);
      const providers: string[] = [];
      // One organisation takes at most 75% of a limit others may share (3 of 4); the rest moves on.
      for (let i = 0; i < 5; i++) providers.push((await routed()).json.provider);
      expect(providers).toEqual(['adyen', 'adyen', 'adyen', 'simulated', 'simulated']);
      advanceClock(1);
      expect((await routed()).json.provider).toBe('adyen');
      // The whole limit, where the organisation is given all of it.
      process.env.SVC_PROVIDER_ORGANISATION_SHARE = '1';
      advanceClock(1);
      const alone: string[] = [];
      for (let i = 0; i < 5; i++) alone.push((await routed()).json.provider);
      expect(alone).toEqual(['adyen', 'adyen', 'adyen', 'adyen', 'simulated']);
    } finally {
      delete process.env.SVC_PROVIDER_ORGANISATION_SHARE;
      if (configured === undefined) delete process.env.SVC_PROVIDER_RATE_LIMITS;
      else process.env.SVC_PROVIDER_RATE_LIMITS = configured;
    }
  });
});

describe('the local runtime’s fault switch', () => {
  it('refuses a provider until reset, and says so in GET /_local/providers', async () => {
    const set = await call('POST', '/_local/providers/adyen/fault', { body: { mode: 'refuse' } });
    expect(set.json).toEqual({ name: 'adyen', fault: 'refuse' });
    try {
      const payment = await routed();
      expect(payment.json).toMatchObject({ provider: 'simulated', providers_tried: [{ provider: 'adyen' }] });
      const view = await call('GET', '/_local/providers');
      expect(view.json.providers.find((p: { name: string }) => p.name === 'adyen').fault).toBe('refuse');
    } finally {
      await call('POST', '/_local/providers/adyen/fault', { body: { mode: null } });
    }
    await closeCircuit();
  });

  it('holds a new payment as an unknown outcome at that provider on timeout, without calling it', async () => {
    await call('POST', '/_local/providers/adyen/fault', { body: { mode: 'timeout' } });
    const before = harness.adyen.requests.length;
    try {
      const payment = await routed();
      expect(payment.json).toMatchObject({
        provider: 'adyen',
        status: 'pending',
        status_reason: 'provider_unavailable',
      });
      expect(payment.json.providers_tried).toBeUndefined();
      expect(harness.adyen.requests.length).toBe(before);
    } finally {
      await call('POST', '/_local/providers/adyen/fault', { body: { mode: null } });
    }
    await closeCircuit();
  });

  it('answers 400 for a mode it does not know and 404 for a provider it does not have', async () => {
    expect((await call('POST', '/_local/providers/adyen/fault', { body: { mode: 'slow' } })).status).toBe(400);
    expect((await call('POST', '/_local/providers/worldpay/fault', { body: { mode: 'refuse' } })).status).toBe(404);
  });
});

describe('an unknown outcome Adyen is slow to report', () => {
  it('is cancelled by our reference after 15 minutes; Adyen had captured it, so its notifications record it succeeded', async () => {
    harness.adyen.fault('lose_answer', { times: 1 });
    const payment = await routed();
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    const late = harness.adyen.takeNotifications(); // Adyen's AUTHORISATION is late: held back
    advanceClock(15 * 60 + 60);
    await call('POST', '/_local/settle');
    expect(await getPayment(payment.json.uuid)).toMatchObject({ status: 'pending' });
    expect(
      harness.adyen.requests.filter(
        (r) =>
          r.path === '/v72/cancels' && (r.body as { paymentReference?: string }).paymentReference === payment.json.uuid,
      ),
    ).toHaveLength(1);
    // The cancel failed (captured) and the authorisation arrives: one charge, recorded.
    expect(
      (
        await notify((cancel) => ({
          ...cancel,
          notificationItems: [...cancel.notificationItems, ...late.notificationItems],
        }))
      ).text,
    ).toBe('[accepted]');
    expect(await getPayment(payment.json.uuid)).toMatchObject({ status: 'succeeded', provider: 'adyen' });
    expect(harness.adyen.byReference(payment.json.uuid).map((p) => p.status)).toEqual(['authorised']);
  });

  it('fails a payment Adyen never made once its cancel and three days have passed with no notification of it', async () => {
    harness.adyen.fault('timeout', { times: 1 });
    const payment = await routed();
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    advanceClock(15 * 60 + 60);
    await call('POST', '/_local/settle');
    await notify(); // TECHNICAL_CANCEL, success false: nothing under that reference
    expect(await getPayment(payment.json.uuid)).toMatchObject({ status: 'pending' });
    advanceClock(3 * 86_400);
    await call('POST', '/_local/settle');
    expect(await getPayment(payment.json.uuid)).toMatchObject({
      status: 'failed',
      status_reason: 'provider_unavailable',
    });
    expect(harness.adyen.byReference(payment.json.uuid)).toEqual([]);
    expect(now()).toBeGreaterThan(0);
  });
});
