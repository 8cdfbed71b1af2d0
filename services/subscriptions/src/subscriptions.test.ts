import { advanceClock, definedFields } from '@svc/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, tokenFor } from '../../../test/support/api';
import { GLOBAL_DEFAULT_PLAN_UUID } from './domain/plans';
import { api, at, DEMO, GOOD_CARD, ok, savedSource, setClock, setup, subscription, supporter } from './test-support';

beforeAll(setup);

const details = (response: { json: { error: { message: Array<{ code: string; property: string }> } } }) =>
  response.json.error.message.map(({ code, property }) => ({ code, property }));

describe('creating subscriptions', () => {
  it('creates an active subscription with every field and the default plan', async () => {
    setClock('2027-03-10T14:00', 'Europe/Zurich');
    const source = await savedSource();
    const donor = await supporter();
    const created = await subscription({
      payment_source_uuid: source,
      supporter_uuid: donor,
      timezone: 'Europe/Zurich',
      custom_parameters: { campaign: 'spring' },
      svc_parameters: { origin: 'test' },
    });
    expect(created).toMatchObject({
      organisation_uuid: DEMO.org,
      account_uuid: DEMO.account,
      supporter_uuid: donor,
      subscription_plan: { uuid: GLOBAL_DEFAULT_PLAN_UUID, name: 'Global default plan' },
      payment_source_uuid: source,
      payment_provider: 'simulated',
      payment_method: 'card',
      currency: 'CHF',
      amount: 2500,
      timezone: 'Europe/Zurich',
      subscription_status: 'active',
      recurring_interval: 'monthly',
      consecutive_failed_invoices: 0,
      test_mode: false,
      custom_parameters: { campaign: 'spring' },
      svc_parameters: { origin: 'test' },
      // Due today: local midnight of the day billing starts.
      next_due_date: at('2027-03-10T00:00', 'Europe/Zurich'),
    });
    expect(await ok('GET', `/subscriptions/${created.uuid}`)).toEqual(created);
    expect(await ok('POST', `/subscriptions/${created.uuid}`)).toEqual(created);
  });

  it('starts pending by default, without a due date, and falls back to UTC for an unknown zone', async () => {
    const created = await subscription({ status: undefined, timezone: 'Mars/Olympus_Mons' });
    expect(created.subscription_status).toBe('pending');
    expect(created.timezone).toBe('UTC');
    expect(created.next_due_date).toBeUndefined();
  });

  it('uses the organisation default plan when none is named', async () => {
    const plan = await ok(
      'POST',
      '/subscription-plans',
      { organisation_uuid: DEMO.org, name: 'Org default', is_default: true },
      201,
    );
    const created = await subscription();
    expect(created.subscription_plan).toEqual({ uuid: plan.uuid, name: 'Org default' });
    await ok('PATCH', `/subscription-plans/${plan.uuid}`, { is_default: false });
  });

  it('requires test_mode to match the payment source', async () => {
    const live = await savedSource(GOOD_CARD, false);
    const response = await api('POST', '/subscriptions', {
      account_uuid: DEMO.account,
      payment_source_uuid: live,
      supporter_uuid: await supporter(),
      currency: 'CHF',
      amount: 100,
      recurring_interval: 'monthly',
      test_mode: true,
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([{ code: 'error.validation.not_valid', property: 'test_mode' }]);
    const testSource = await savedSource(GOOD_CARD, true);
    const created = await subscription({ payment_source_uuid: testSource, test_mode: true });
    expect(created.test_mode).toBe(true);
  });

  it.each([
    [{ recurring_interval: 'fortnightly' }, 'recurring_interval'],
    [{ recurring_interval: '30 2 *' }, 'recurring_interval'],
    [{ recurring_interval: '32 * *' }, 'recurring_interval'],
    [{ amount: 0 }, 'amount'],
    [{ amount: '12' }, 'amount'],
    [{ currency: 'chf' }, 'currency'],
    [{ planned_end: '2027-02-30' }, 'planned_end'],
    [{ planned_effective_from: '2020-01-01' }, 'planned_effective_from'],
    [{ custom_parameters: { n: 1 } }, 'custom_parameters.n'],
    [{ status: 'cancelled' }, 'status'],
    [{ subscription_plan_uuid: '00000000-0000-4000-8000-00000000abcd' }, 'subscription_plan_uuid'],
  ])('refuses %j with a 400 on the field, and stores nothing', async (fields, property) => {
    const base = {
      account_uuid: DEMO.account,
      payment_source_uuid: await savedSource(),
      supporter_uuid: await supporter(),
      currency: 'CHF',
      amount: 100,
      recurring_interval: 'monthly',
    };
    const response = await api('POST', '/subscriptions', { ...base, ...fields });
    expect(response.status, response.text).toBe(400);
    expect(details(response).map((d: { property: string }) => d.property)).toContain(property);
  });

  it('names each missing required field', async () => {
    const response = await api('POST', '/subscriptions', {});
    expect(response.status).toBe(400);
    expect(
      details(response)
        .map((d: { property: string }) => d.property)
        .sort(),
    ).toEqual(
      ['account_uuid', 'amount', 'currency', 'payment_source_uuid', 'recurring_interval', 'supporter_uuid'].sort(),
    );
  });

  it('keeps other tenants out and answers 404 for unknown ones', async () => {
    const created = await subscription();
    const other = await tokenFor(DEMO.otherClient);
    const invoice = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    const invoicePath = `/subscriptions/${created.uuid}/invoices/${invoice.uuid}`;
    for (const [method, path, body] of [
      ['GET', `/subscriptions/${created.uuid}`, undefined],
      ['POST', `/subscriptions/${created.uuid}`, undefined],
      ['PATCH', `/subscriptions/${created.uuid}`, { amount: 1 }],
      ['POST', `/subscriptions/${created.uuid}/activate`, undefined],
      ['POST', `/subscriptions/${created.uuid}/suspend`, {}],
      ['POST', `/subscriptions/${created.uuid}/cancel`, undefined],
      ['GET', `/subscriptions/${created.uuid}/invoices`, undefined],
      ['POST', `/subscriptions/${created.uuid}/invoices`, {}],
      ['GET', invoicePath, undefined],
      ['POST', `${invoicePath}/close`, { status: 'nonsense' }],
      ['POST', `${invoicePath}/charge-attempts`, undefined],
      [
        'POST',
        '/subscriptions',
        {
          account_uuid: DEMO.account,
          payment_source_uuid: created.payment_source_uuid,
          supporter_uuid: created.supporter_uuid,
          currency: 'CHF',
          amount: 1,
          recurring_interval: 'monthly',
        },
      ],
    ] as const) {
      const response = await call(method, path, { token: other, ...definedFields({ body }) });
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    // Nothing changed for the owner.
    expect(await ok('GET', `/subscriptions/${created.uuid}`)).toEqual(created);
    expect((await ok('GET', invoicePath)).status).toBe('open');
    expect((await api('GET', '/subscriptions/5b0c7c52-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api('GET', '/subscriptions/not-a-uuid')).status).toBe(404);
  });
});

describe('updating subscriptions', () => {
  it('sets the supporter only while it is unset', async () => {
    setClock('2027-01-05T10:00');
    const created = await subscription();
    const response = await api('PATCH', `/subscriptions/${created.uuid}`, { supporter_uuid: await supporter() });
    expect(response.status).toBe(409);
    expect(details(response)[0]?.property).toBe('supporter_uuid');
    // The same supporter again is no change.
    expect(
      (await api('PATCH', `/subscriptions/${created.uuid}`, { supporter_uuid: created.supporter_uuid })).status,
    ).toBe(200);
  });

  it('changes amount, interval, zone and parameters, and reschedules', async () => {
    setClock('2027-01-05T10:00');
    const created = await subscription({ recurring_interval: '20 * *' });
    expect(created.next_due_date).toBe(at('2027-01-20T00:00'));
    const updated = await ok('PATCH', `/subscriptions/${created.uuid}`, {
      amount: 5000,
      recurring_interval: '25 * *',
      timezone: 'America/New_York',
      custom_parameters: { channel: 'web' },
    });
    expect(updated).toMatchObject({
      amount: 5000,
      recurring_interval: '25 * *',
      timezone: 'America/New_York',
      custom_parameters: { channel: 'web' },
      next_due_date: at('2027-01-25T00:00', 'America/New_York'),
    });
    expect((await api('PATCH', `/subscriptions/${created.uuid}`, { recurring_interval: 'L L L' })).status).toBe(400);
  });

  it('ends at planned_end: finished, with ended_at', async () => {
    setClock('2027-01-05T10:00');
    const created = await subscription({ planned_end: '2027-03-01' });
    expect(created.planned_end).toBe(at('2027-03-01T00:00'));
    setClock('2027-03-01T00:00');
    const finished = await ok('GET', `/subscriptions/${created.uuid}`);
    expect(finished.subscription_status).toBe('finished');
    expect(finished.ended_at).toBe(at('2027-03-01T00:00'));
    expect(finished.next_due_date).toBeUndefined();
    expect((await api('POST', `/subscriptions/${created.uuid}/activate`)).status).toBe(409);
  });
});

describe('the state table', () => {
  const transition = (uuid: string, action: string, body?: unknown) =>
    api('POST', `/subscriptions/${uuid}/${action}`, body);

  it('activate: pending and suspended become active; anything else is 409', async () => {
    const pending = await subscription({ status: 'pending' });
    const active = await ok('POST', `/subscriptions/${pending.uuid}/activate`);
    expect(active.subscription_status).toBe('active');
    expect(active.next_due_date).toBeDefined();
    expect((await transition(pending.uuid, 'activate')).status).toBe(409);
    await ok('POST', `/subscriptions/${pending.uuid}/suspend`);
    expect((await ok('POST', `/subscriptions/${pending.uuid}/activate`)).subscription_status).toBe('active');
    await ok('POST', `/subscriptions/${pending.uuid}/cancel`);
    expect((await transition(pending.uuid, 'activate')).status).toBe(409);
  });

  it('cancel: pending, active and suspended become cancelled; a second cancel is 409', async () => {
    for (const setupState of ['pending', 'active', 'suspended']) {
      const created = await subscription({ status: setupState === 'pending' ? 'pending' : 'active' });
      if (setupState === 'suspended') await ok('POST', `/subscriptions/${created.uuid}/suspend`);
      const cancelled = await ok('POST', `/subscriptions/${created.uuid}/cancel`);
      expect(cancelled.subscription_status).toBe('cancelled');
      expect(cancelled.ended_at).toBeDefined();
      expect(cancelled.next_due_date).toBeUndefined();
      expect((await transition(created.uuid, 'cancel')).status).toBe(409);
      expect((await transition(created.uuid, 'suspend')).status).toBe(409);
      expect((await api('PATCH', `/subscriptions/${created.uuid}`, { amount: 1 })).status).toBe(409);
    }
  });

  it('of concurrent transitions exactly one lands; the rest are 409', async () => {
    const created = await subscription();
    const cancels = await Promise.all(Array.from({ length: 10 }, () => transition(created.uuid, 'cancel')));
    expect(cancels.filter((r) => r.status === 200)).toHaveLength(1);
    expect(cancels.filter((r) => r.status === 409)).toHaveLength(9);
    const pending = await subscription({ status: 'pending' });
    const activations = await Promise.all(Array.from({ length: 10 }, () => transition(pending.uuid, 'activate')));
    expect(activations.filter((r) => r.status === 200)).toHaveLength(1);
    expect(activations.filter((r) => r.status === 409)).toHaveLength(9);
  });

  it('suspend: only active or suspended; pending is 409', async () => {
    const pending = await subscription({ status: 'pending' });
    expect((await transition(pending.uuid, 'suspend')).status).toBe(409);
  });
});

describe('suspensions', () => {
  it('suspends at once and indefinitely without dates', async () => {
    setClock('2027-05-10T09:00');
    const created = await subscription();
    const suspended = await ok('POST', `/subscriptions/${created.uuid}/suspend`);
    expect(suspended).toMatchObject({ subscription_status: 'suspended', suspension_start: at('2027-05-10T00:00') });
    expect(suspended.suspension_end).toBeUndefined();
    expect(suspended.next_due_date).toBeUndefined();
  });

  it('starts on a future day, refuses a past start, and resumes on the end day', async () => {
    setClock('2027-05-10T09:00');
    const created = await subscription({ recurring_interval: '15 * *' });
    const past = await api('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_start: '2027-05-09' });
    expect(past.status).toBe(400);
    expect(details(past)[0]?.property).toBe('suspension_start');
    const reversed = await api('POST', `/subscriptions/${created.uuid}/suspend`, {
      suspension_start: '2027-05-20',
      suspension_end: '2027-05-20',
    });
    expect(reversed.status).toBe(400);
    const planned = await ok('POST', `/subscriptions/${created.uuid}/suspend`, {
      suspension_start: '2027-05-12',
      suspension_end: '2027-07-01',
    });
    expect(planned.subscription_status).toBe('active');
    // May 15 and June 15 fall inside the suspension: the next due day shown is July 15.
    expect(planned.next_due_date).toBe(at('2027-07-15T00:00'));
    setClock('2027-05-12T00:00');
    expect((await ok('GET', `/subscriptions/${created.uuid}`)).subscription_status).toBe('suspended');
    // Modifying the suspension in force: the start cannot be given, the end can change.
    const moveStart = await api('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_start: '2027-05-20' });
    expect(moveStart.status).toBe(400);
    const shorter = await ok('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '2027-06-01' });
    expect(shorter.suspension_start).toBe(at('2027-05-12T00:00'));
    expect(shorter.suspension_end).toBe(at('2027-06-01T00:00'));
    expect(shorter.next_due_date).toBe(at('2027-06-15T00:00'));
    // A day later the suspension in force can still be changed (its start is in the past now).
    setClock('2027-05-20T09:00');
    const later = await ok('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '2027-06-02' });
    expect(later.suspension_end).toBe(at('2027-06-02T00:00'));
    setClock('2027-06-02T00:00');
    expect((await ok('GET', `/subscriptions/${created.uuid}`)).subscription_status).toBe('active');
  });

  it('refuses dates beyond 2199 with a 400 instead of failing later', async () => {
    setClock('2027-05-10T09:00');
    const created = await subscription({ recurring_interval: '1 * *' });
    const far = await api('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '9999-12-31' });
    expect(far.status).toBe(400);
    expect(details(far)[0]?.property).toBe('suspension_end');
    const farthest = await ok('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '2199-12-31' });
    expect(farthest.next_due_date).toBe(at('2200-01-01T00:00'));
    expect((await api('POST', '/search/subscriptions', { query: { $match: { uuid: created.uuid } } })).status).toBe(
      200,
    );
    const start = await api('PATCH', `/subscriptions/${created.uuid}`, { planned_effective_from: '9999-12-30' });
    expect(start.status).toBe(400);
  });

  it('a subscription suspended past its due days is not charged, and is charged again after the end', async () => {
    setClock('2027-08-01T09:00');
    const created = await subscription({ recurring_interval: '5 * *' });
    await ok('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '2027-09-10' });
    setClock('2027-08-05T06:00');
    await ok('POST', '/_local/billing-run');
    setClock('2027-09-05T06:00');
    await ok('POST', '/_local/billing-run');
    expect(await ok('GET', `/subscriptions/${created.uuid}/invoices`)).toEqual([]);
    setClock('2027-10-05T06:00');
    await ok('POST', '/_local/billing-run');
    const invoices = await ok('GET', `/subscriptions/${created.uuid}/invoices`);
    expect(invoices).toHaveLength(1);
    expect(invoices[0].status).toBe('paid');
  });
});

/** A card payment that saves its source, with the given fields merged in. */
const donation = (fields: Record<string, unknown>, number = GOOD_CARD) => ({
  account_uuid: DEMO.account,
  payment_method: 'card',
  profile: 'card-test',
  amount: { value: '3000', currency: 'CHF' },
  payment_information: { number, expiry_month: 12, expiry_year: 2099, cvv: '123' },
  create_payment_source: true,
  ...fields,
});

describe('a subscription from a payment request', () => {
  it('starts active, charged from the saved source one interval after the payment', async () => {
    setClock('2027-01-31T12:00', 'Europe/Zurich');
    const payment = await ok(
      'POST',
      '/payments',
      donation({
        supporter: { first_name: 'Grace', email: 'grace@example.org' },
        create_supporter: true,
        subscription: { recurring_interval: 'monthly', timezone: 'Europe/Zurich' },
      }),
      201,
    );
    expect(payment.subscription_uuid).toEqual(expect.any(String));
    const created = await ok('GET', `/subscriptions/${payment.subscription_uuid}`);
    expect(created).toMatchObject({
      subscription_status: 'active',
      amount: 3000,
      currency: 'CHF',
      payment_source_uuid: payment.created_payment_source_uuid,
      supporter_uuid: payment.supporter_uuid,
      timezone: 'Europe/Zurich',
      // Jan 31 → Feb 28: the month end is kept, not skipped.
      next_due_date: at('2027-02-28T00:00', 'Europe/Zurich'),
    });
  });

  it('pays the current period when billing starts today, and starts later when planned', async () => {
    setClock('2027-03-10T12:00');
    const pay = (subscriptionFields: Record<string, unknown>) =>
      ok(
        'POST',
        '/payments',
        donation({ subscription: { recurring_interval: 'monthly', ...subscriptionFields } }),
        201,
      );
    const today = await pay({ planned_effective_from: '2027-03-10' });
    const later = await pay({ planned_effective_from: '2027-04-01' });
    await ok('POST', '/_local/billing-run');
    expect(await ok('GET', `/subscriptions/${today.subscription_uuid}/invoices`)).toEqual([]);
    expect((await ok('GET', `/subscriptions/${today.subscription_uuid}`)).next_due_date).toBe(at('2027-04-10T00:00'));
    expect((await ok('GET', `/subscriptions/${later.subscription_uuid}`)).next_due_date).toBe(at('2027-04-01T00:00'));
  });

  it('checks the planned dates before the card is charged', async () => {
    setClock('2027-03-10T12:00');
    const marker = `dates-${Date.now()}`;
    for (const [subscriptionFields, property] of [
      [{ planned_effective_from: '2027-03-01' }, 'subscription.planned_effective_from'],
      [{ planned_end: '2027-03-05' }, 'subscription.planned_end'],
      [{ planned_effective_from: '2027-05-01', planned_end: '2027-04-01' }, 'subscription.planned_end'],
      [{ planned_end: '9999-01-01' }, 'subscription.planned_end'],
    ] as const) {
      const response = await api(
        'POST',
        '/payments',
        donation({
          custom_parameters: { marker },
          subscription: { recurring_interval: 'monthly', ...subscriptionFields },
        }),
      );
      expect(response.status, response.text).toBe(400);
      expect(details(response)[0]?.property).toBe(property);
    }
    const payments = await ok('POST', '/search/payments', {
      query: { $match: { 'custom_parameters.marker': marker } },
    });
    expect(payments.summary.hits).toBe(0);
  });

  it('needs create_payment_source and a valid interval, and charges nobody otherwise', async () => {
    const noSource = await api(
      'POST',
      '/payments',
      donation({ create_payment_source: undefined, subscription: { recurring_interval: 'monthly' } }),
    );
    expect(noSource.status).toBe(400);
    expect(details(noSource)[0]?.property).toBe('create_payment_source');
    const badInterval = await api('POST', '/payments', donation({ subscription: { recurring_interval: '0 0 * *' } }));
    expect(badInterval.status).toBe(400);
    expect(details(badInterval)[0]?.property).toBe('subscription.recurring_interval');
  });

  it('waits for the approval of a pending (3-D Secure) payment', async () => {
    const payment = await ok(
      'POST',
      '/payments',
      donation({ subscription: { recurring_interval: 'yearly' } }, '4000000000003220'),
      201,
    );
    expect(payment.status).toBe('pending');
    expect(payment.subscription_uuid).toBeUndefined();
    const page = new URL(payment.action.url);
    const approved = await call('POST', page.pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: `decision=approve&token=${page.searchParams.get('token')}`,
    });
    expect(approved.status).toBeLessThan(400);
    const after = await ok('GET', `/payments/${payment.uuid}`);
    expect(after.status).toBe('succeeded');
    const created = await ok('GET', `/subscriptions/${after.subscription_uuid}`);
    expect(created.recurring_interval).toBe('yearly');
    expect(created.payment_source_uuid).toBe(after.created_payment_source_uuid);
  });
});

describe('search', () => {
  it('searches subscriptions with the search language, scoped to the grants', async () => {
    setClock('2027-02-01T10:00');
    const marker = `campaign-${Date.now()}`;
    const a = await subscription({ amount: 1000, custom_parameters: { campaign: marker } });
    await subscription({ amount: 9000, custom_parameters: { campaign: marker } });
    await ok('POST', `/subscriptions/${a.uuid}/cancel`);
    const result = await ok('POST', '/search/subscriptions', {
      query: {
        $and: [{ $match: { 'custom_parameters.campaign': marker } }, { $match: { subscription_status: 'active' } }],
      },
      aggs: { total: { type: 'sum', field: 'amount' } },
    });
    expect(result.summary.hits).toBe(1);
    expect(result.hits[0].amount).toBe(9000);
    expect(result.aggregations.total).toEqual([{ key: 'sum', value: 9000 }]);
    const other = await tokenFor(DEMO.otherClient);
    const theirs = await call('POST', '/search/subscriptions', {
      token: other,
      body: { query: { $match: { 'custom_parameters.campaign': marker } } },
    });
    expect(theirs.json.summary.hits).toBe(0);
    advanceClock(1);
  });
});
