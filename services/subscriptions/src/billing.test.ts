import { advanceClock, derivedUuid, now } from '@svc/core';
import { findPaymentSource } from '@svc/payments';
import { transactWrite } from '@svc/table';
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { streamEvents } from '../../../test/support/stream';
import { openAttempt } from './domain/billing';
import { processBillingBatch } from './handlers/billing-worker';
import { findInvoice, findSubscription, invoicePut } from './repository/subscription-repository';
import {
  api,
  at,
  billingRun,
  DEMO,
  FAILING_CARD,
  localDay,
  ok,
  savedSource,
  setClock,
  setup,
  subscription,
} from './test-support';

beforeAll(setup);

const DAY = 86_400;

async function invoicesOf(uuid: string) {
  return ok('GET', `/subscriptions/${uuid}/invoices`);
}

describe('billing runs', () => {
  it('charges a due subscription once: invoice paid, attempt succeeded, payment linked', async () => {
    setClock('2027-04-01T08:00');
    const created = await subscription({ amount: 1234, custom_parameters: { campaign: 'spring' } });
    const summary = await billingRun();
    expect(summary).toMatchObject({ invoices_created: 1, charge_attempts_created: 1, succeeded: 1, failed: 0 });
    expect(summary.due).toBeGreaterThanOrEqual(1);
    const [invoice, ...more] = await invoicesOf(created.uuid);
    expect(more).toHaveLength(0);
    expect(invoice).toMatchObject({
      subscription: { uuid: created.uuid },
      status: 'paid',
      status_reason: 'paid',
      amount: 1234,
      refunded_amount: 0,
      currency: 'CHF',
      failed_payment_attempts: 0,
      is_manually_created: false,
      custom_parameters: { campaign: 'spring' },
    });
    expect(invoice.next_attempt_date).toBeUndefined();
    expect(invoice.charge_attempts).toEqual([{ uuid: expect.any(String), status: 'succeeded', created: now() }]);
    const after = await ok('GET', `/subscriptions/${created.uuid}`);
    expect(after.next_due_date).toBe(at('2027-05-01T00:00'));

    // The payment of the charge attempt, refunded in part, shows on the invoice.
    const payments = await ok('POST', '/search/payments', {
      query: { $match: { invoice_uuid: invoice.uuid } },
    });
    expect(payments.summary.hits).toBe(1);
    const payment = payments.hits[0];
    expect(payment).toMatchObject({
      status: 'succeeded',
      amount: { value: '1234', currency: 'CHF' },
      subscription_uuid: created.uuid,
      charge_attempt_uuid: invoice.charge_attempts[0].uuid,
      charged_payment_source_uuid: created.payment_source_uuid,
    });
    await ok('POST', `/payments/${payment.uuid}/refunds`, { amount: { value: '234', currency: 'CHF' } });
    expect((await ok('GET', `/subscriptions/${created.uuid}/invoices/${invoice.uuid}`)).refunded_amount).toBe(234);

    // A repeated run finds nothing new.
    const again = await billingRun();
    expect(again).toMatchObject({ invoices_created: 0, charge_attempts_created: 0, succeeded: 0, failed: 0 });
    expect(await invoicesOf(created.uuid)).toHaveLength(1);
  });

  it('a duplicated billing message creates no second invoice or charge', async () => {
    setClock('2027-04-01T08:00');
    const created = await subscription();
    const body = JSON.stringify({ kind: 'subscription', subscription_uuid: created.uuid, due: now() });
    const record = (id: string) => ({ messageId: id, body }) as SQSEvent['Records'][number];
    // Twice in one batch (two workers at once) and once more later (a redelivery).
    const first = await processBillingBatch({ Records: [record('a'), record('b')] });
    const second = await processBillingBatch({ Records: [record('c')] });
    expect(first.response.batchItemFailures).toEqual([]);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(first.outcome.invoices_created + second.outcome.invoices_created).toBe(1);
    expect(first.outcome.charge_attempts_created + second.outcome.charge_attempts_created).toBe(1);
    const invoices = await invoicesOf(created.uuid);
    expect(invoices).toHaveLength(1);
    expect(invoices[0].charge_attempts).toHaveLength(1);
    const payments = await ok('POST', '/search/payments', { query: { $match: { subscription_uuid: created.uuid } } });
    expect(payments.summary.hits).toBe(1);
  });

  it('a malformed message is reported back for redelivery (and the dead-letter queue)', async () => {
    const result = await processBillingBatch({
      Records: [{ messageId: 'bad', body: '{"kind":"nothing"}' } as SQSEvent['Records'][number]],
    });
    expect(result.response.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
  });

  it('bills a year monthly in Europe/Zurich across both daylight-saving changes', async () => {
    const zone = 'Europe/Zurich';
    setClock('2027-01-15T10:00', zone);
    const created = await subscription({ timezone: zone });
    const dues: number[] = [];
    for (let month = 0; month < 12; month++) {
      const current = await ok('GET', `/subscriptions/${created.uuid}`);
      dues.push(current.next_due_date);
      // One minute before the due midnight nothing happens; one minute after, the period is charged.
      setClock(new Date((current.next_due_date - 60) * 1000).toISOString());
      await billingRun();
      expect(await invoicesOf(created.uuid)).toHaveLength(month);
      setClock(new Date((current.next_due_date + 60) * 1000).toISOString());
      await billingRun();
      expect(await invoicesOf(created.uuid)).toHaveLength(month + 1);
    }
    expect(dues.map((due) => localDay(due, zone))).toEqual([
      '2027-01-15',
      '2027-02-15',
      '2027-03-15',
      '2027-04-15',
      '2027-05-15',
      '2027-06-15',
      '2027-07-15',
      '2027-08-15',
      '2027-09-15',
      '2027-10-15',
      '2027-11-15',
      '2027-12-15',
    ]);
    for (const due of dues)
      expect(new Date(due * 1000).toLocaleTimeString('en-GB', { timeZone: zone })).toBe('00:00:00');
    // Winter time is UTC+1, summer time UTC+2: the midnights move by an hour in UTC.
    expect(new Date((dues[2] as number) * 1000).toISOString()).toBe('2027-03-14T23:00:00.000Z');
    expect(new Date((dues[3] as number) * 1000).toISOString()).toBe('2027-04-14T22:00:00.000Z');
    expect(new Date((dues[10] as number) * 1000).toISOString()).toBe('2027-11-14T23:00:00.000Z');
    const invoices = await invoicesOf(created.uuid);
    expect(invoices).toHaveLength(12);
    expect(invoices.every((invoice: { status: string }) => invoice.status === 'paid')).toBe(true);
  });

  it.each([
    ['L * *', '2028-01-10', ['2028-01-31', '2028-02-29', '2028-03-31']],
    ['L * *', '2027-01-10', ['2027-01-31', '2027-02-28', '2027-03-31']],
    ['31 * *', '2028-01-10', ['2028-01-31', '2028-03-31', '2028-05-31']],
    ['31 * *', '2027-01-10', ['2027-01-31', '2027-03-31', '2027-05-31']],
    ['monthly', '2028-01-31', ['2028-01-31', '2028-02-29', '2028-03-31']],
    ['monthly', '2027-01-31', ['2027-01-31', '2027-02-28', '2027-03-31']],
  ])('%s from %s is due on %j', async (interval, start, expected) => {
    setClock(`${start}T09:00`);
    const created = await subscription({ recurring_interval: interval });
    const seen: string[] = [];
    for (let i = 0; i < expected.length; i++) {
      const current = await ok('GET', `/subscriptions/${created.uuid}`);
      seen.push(localDay(current.next_due_date, 'UTC'));
      setClock(new Date((current.next_due_date + 3600) * 1000).toISOString());
      await billingRun();
    }
    expect(seen).toEqual(expected);
  });

  it('charges only the latest missed period when it is several periods behind', async () => {
    setClock('2027-01-10T09:00');
    const created = await subscription({ recurring_interval: '10 * *' });
    await billingRun();
    setClock('2027-04-12T09:00');
    const summary = await billingRun();
    expect(summary.invoices_created).toBe(1);
    const invoices = await invoicesOf(created.uuid);
    expect(invoices).toHaveLength(2);
    // The invoice is the April period's (its uuid is derived from the period), not January's or March's.
    expect(invoices[1].uuid).toBe(derivedUuid('invoice', created.uuid, '2027-04-10'));
    const after = await ok('GET', `/subscriptions/${created.uuid}`);
    expect(after.next_due_date).toBe(at('2027-05-10T00:00'));
  });

  it('bills nothing for pending, cancelled or indefinitely suspended subscriptions', async () => {
    setClock('2027-06-01T09:00');
    const pending = await subscription({ status: 'pending' });
    const cancelled = await subscription();
    await ok('POST', `/subscriptions/${cancelled.uuid}/cancel`);
    const suspended = await subscription();
    await ok('POST', `/subscriptions/${suspended.uuid}/suspend`);
    setClock('2027-08-01T09:00');
    await billingRun();
    for (const s of [pending, cancelled, suspended]) expect(await invoicesOf(s.uuid)).toHaveLength(0);
  });

  it('stores finished once the planned end passes', async () => {
    setClock('2027-06-01T09:00');
    const created = await subscription({ planned_end: '2027-07-15' });
    await billingRun();
    setClock('2027-07-01T09:00');
    await billingRun();
    setClock('2027-08-01T09:00');
    await billingRun();
    expect(await invoicesOf(created.uuid)).toHaveLength(2);
    const stored = await findSubscription(created.uuid);
    expect(stored?.status).toBe('finished');
    expect(stored?.ended_at).toBe(at('2027-07-15T00:00'));
  });

  it.each([
    ['an open invoice', false],
    ['a cancelled invoice', true],
  ])('takes over a charge of %s whose worker died after opening it, once the lease lapses', async (_, cancel) => {
    setClock('2027-09-01T09:00');
    const created = await subscription({ status: 'pending' });
    const manual = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    if (cancel)
      await ok('POST', `/subscriptions/${created.uuid}/invoices/${manual.uuid}/close`, { status: 'cancelled' });
    // A worker opens the attempt (pending payment written) and dies before asking the provider.
    const record = await findSubscription(created.uuid);
    const invoice = await findInvoice(created.uuid, manual.uuid);
    const source = await findPaymentSource(created.payment_source_uuid);
    if (!record || !invoice || !source) throw new Error('setup');
    const next = { ...structuredClone(invoice), events: [], version: invoice.version + 1 };
    const { attempt, payment } = openAttempt(next, record, source, true, now());
    const { newPaymentWrite } = await import('@svc/payments');
    await transactWrite([{ item: invoicePut(next, invoice.version) }, { item: newPaymentWrite(payment) }]);
    expect((await api('POST', `/subscriptions/${created.uuid}/invoices/${manual.uuid}/charge-attempts`)).status).toBe(
      409,
    );

    await billingRun();
    expect((await findInvoice(created.uuid, manual.uuid))?.charge_attempts[0]?.status).toBe('pending');
    advanceClock(301);
    await billingRun();
    const settled = await ok('GET', `/subscriptions/${created.uuid}/invoices/${manual.uuid}`);
    expect(settled.status).toBe('paid');
    expect(settled.charge_attempts).toEqual([{ uuid: attempt.uuid, status: 'succeeded', created: expect.any(Number) }]);
    expect((await ok('GET', `/payments/${payment.uuid}`)).status).toBe('succeeded');
  });
});

describe('dunning', () => {
  it('runs the default plan on a failing card to the end, then the subscription is cancelled', async () => {
    setClock('2027-01-05T09:00');
    const created = await subscription({
      payment_source_uuid: await savedSource(FAILING_CARD),
      recurring_interval: '5 * *',
    });
    for (let month = 1; month <= 3; month++) {
      const due = at(`2027-0${month}-05T09:00`);
      setClock(new Date(due * 1000).toISOString());
      const first = await billingRun();
      expect(first).toMatchObject({ invoices_created: 1, failed: 1 });
      // Retries 2, 4 and 6 days after each failure: four attempts in all.
      let invoice = (await invoicesOf(created.uuid)).at(-1);
      const retryDays: string[] = [];
      for (let retry = 0; retry < 3; retry++) {
        expect(invoice.status).toBe('open');
        retryDays.push(localDay(invoice.next_attempt_date, 'UTC'));
        setClock(new Date((invoice.next_attempt_date + 3600) * 1000).toISOString());
        expect(await billingRun()).toMatchObject({ charge_attempts_created: 1, failed: 1, invoices_created: 0 });
        invoice = (await invoicesOf(created.uuid)).at(-1);
      }
      expect(retryDays).toEqual([`2027-0${month}-07`, `2027-0${month}-11`, `2027-0${month}-17`]);
      expect(invoice).toMatchObject({ status: 'cancelled', failed_payment_attempts: 4 });
      expect(invoice.next_attempt_date).toBeUndefined();
      expect(invoice.charge_attempts.map((a: { status: string }) => a.status)).toEqual([
        'failed',
        'failed',
        'failed',
        'failed',
      ]);
      const current = await ok('GET', `/subscriptions/${created.uuid}`);
      expect(current.consecutive_failed_invoices).toBe(month);
      expect(current.subscription_status).toBe(month < 3 ? 'active' : 'cancelled');
    }
    setClock('2027-04-05T09:00');
    expect((await billingRun()).invoices_created).toBe(0);
    const events = (await streamEvents()).filter(
      (e) =>
        e.object_uuid === created.uuid ||
        e.name.startsWith('svc.subscriptions.invoice') ||
        e.name.includes('charge_attempt'),
    );
    const names = new Set(events.map((e) => e.name));
    for (const name of [
      'svc.subscriptions.subscription.created',
      'svc.subscriptions.invoice.created',
      'svc.subscriptions.charge_attempt.failed',
      'svc.subscriptions.invoice.cancelled',
      'svc.subscriptions.subscription.cancelled',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('suspends at the limit when the plan says so, and a later success resets the count', async () => {
    setClock('2027-01-05T09:00');
    const realPlan = await ok(
      'POST',
      '/subscription-plans',
      {
        organisation_uuid: DEMO.org,
        name: 'Patient',
        dunning_configuration: { retry_delays_days: [1], max_consecutive_failed_invoices: 2, on_max_failed: 'suspend' },
      },
      201,
    );
    const created = await subscription({
      payment_source_uuid: await savedSource(FAILING_CARD),
      subscription_plan_uuid: realPlan.uuid,
      recurring_interval: '5 * *',
    });
    const failMonth = async (month: number) => {
      setClock(`2027-0${month}-05T09:00`);
      expect((await billingRun()).failed).toBe(1);
      setClock(`2027-0${month}-06T09:00`);
      expect((await billingRun()).failed).toBe(1);
    };
    await failMonth(1);
    expect((await ok('GET', `/subscriptions/${created.uuid}`)).consecutive_failed_invoices).toBe(1);
    // A success in between resets the count.
    const good = await savedSource();
    await ok('PATCH', `/subscriptions/${created.uuid}`, { payment_source_uuid: good });
    setClock('2027-02-05T09:00');
    expect((await billingRun()).succeeded).toBe(1);
    expect((await ok('GET', `/subscriptions/${created.uuid}`)).consecutive_failed_invoices).toBe(0);
    // Back to the failing card: two failed invoices in a row reach the limit.
    await ok('PATCH', `/subscriptions/${created.uuid}`, { payment_source_uuid: await savedSource(FAILING_CARD) });
    await failMonth(3);
    await failMonth(4);
    const suspended = await ok('GET', `/subscriptions/${created.uuid}`);
    expect(suspended).toMatchObject({ subscription_status: 'suspended', consecutive_failed_invoices: 2 });
    expect(suspended.suspension_start).toBe(at('2027-04-06T00:00'));
  });

  it('retries when a suspension with an end is over, not during it', async () => {
    setClock('2027-01-05T09:00');
    const created = await subscription({
      payment_source_uuid: await savedSource(FAILING_CARD),
      recurring_interval: '5 * *',
    });
    await billingRun();
    await ok('POST', `/subscriptions/${created.uuid}/suspend`, { suspension_end: '2027-01-20' });
    setClock('2027-01-08T09:00');
    await billingRun();
    let [invoice] = await invoicesOf(created.uuid);
    expect(invoice.charge_attempts).toHaveLength(1);
    expect(invoice.next_attempt_date).toBe(at('2027-01-20T00:00'));
    setClock('2027-01-20T09:00');
    await billingRun();
    [invoice] = await invoicesOf(created.uuid);
    expect(invoice.charge_attempts).toHaveLength(2);
    expect(invoice.next_attempt_date).toBe(at('2027-01-24T00:00'));
  });

  it('stops dunning when the subscription is cancelled', async () => {
    setClock('2027-01-05T09:00');
    const created = await subscription({
      payment_source_uuid: await savedSource(FAILING_CARD),
      recurring_interval: '5 * *',
    });
    await billingRun();
    await ok('POST', `/subscriptions/${created.uuid}/cancel`);
    setClock('2027-01-08T09:00');
    expect((await billingRun()).charge_attempts_created).toBe(0);
    const [invoice] = await invoicesOf(created.uuid);
    expect(invoice.charge_attempts).toHaveLength(1);
    expect(invoice.next_attempt_date).toBeUndefined();
  });
});

describe('manual invoices and charge attempts', () => {
  it('creates a manual invoice with the subscription amount and inherited parameters', async () => {
    setClock('2027-02-01T09:00');
    const created = await subscription({ amount: 700, custom_parameters: { campaign: 'a', channel: 'web' } });
    const invoice = await ok(
      'POST',
      `/subscriptions/${created.uuid}/invoices`,
      { custom_parameters: { campaign: 'b' }, svc_parameters: { note: 'x' } },
      201,
    );
    expect(invoice).toMatchObject({
      status: 'open',
      status_reason: 'pending',
      amount: 700,
      currency: 'CHF',
      is_manually_created: true,
      failed_payment_attempts: 0,
      charge_attempts: [],
      custom_parameters: { campaign: 'b', channel: 'web' },
      svc_parameters: { note: 'x' },
    });
    const other = await ok('POST', `/subscriptions/${created.uuid}/invoices`, { amount: 99 }, 201);
    expect(other.amount).toBe(99);
    expect((await api('POST', `/subscriptions/${created.uuid}/invoices`, { amount: -1 })).status).toBe(400);
    expect((await api('POST', `/subscriptions/${created.uuid}/invoices`, { custom_parameters: { n: 1 } })).status).toBe(
      400,
    );
    expect(await ok('GET', `/subscriptions/${created.uuid}/invoices/${invoice.uuid}`)).toEqual(invoice);
    expect(
      (await api('GET', `/subscriptions/${created.uuid}/invoices/5b0c7c52-0000-4000-8000-000000000000`)).status,
    ).toBe(404);
  });

  it('closes an open invoice as paid or cancelled, and refuses any other status', async () => {
    const created = await subscription({ status: 'pending' });
    const invoice = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    const path = `/subscriptions/${created.uuid}/invoices/${invoice.uuid}/close`;
    for (const status of ['open', 'refunded', 1, null]) {
      const refused = await api('POST', path, { status });
      expect(refused.status).toBe(400);
      expect(refused.json.error.message[0]).toMatchObject({
        code: 'the_value_you_selected_is_not_a_valid_choice',
        property: 'status',
      });
    }
    const closed = await ok('POST', path, { status: 'cancelled' });
    expect(closed.status).toBe('cancelled');
    expect((await api('POST', path, { status: 'paid' })).status).toBe(409);
    const second = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    const paid = await ok('POST', `/subscriptions/${created.uuid}/invoices/${second.uuid}/close`, { status: 'paid' });
    expect(paid).toMatchObject({ status: 'paid', status_reason: 'paid' });
    const attempt = await api('POST', `/subscriptions/${created.uuid}/invoices/${second.uuid}/charge-attempts`);
    expect(attempt.status).toBe(409);
  });

  it('of 20 concurrent charge-attempt requests exactly one creates an attempt', async () => {
    const created = await subscription({ status: 'pending' });
    const invoice = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    const path = `/subscriptions/${created.uuid}/invoices/${invoice.uuid}/charge-attempts`;
    const responses = await Promise.all(Array.from({ length: 20 }, () => api('POST', path)));
    const createdAttempts = responses.filter((r) => r.status === 201);
    expect(createdAttempts).toHaveLength(1);
    const refused = responses.filter((r) => r.status === 409);
    expect(refused).toHaveLength(19);
    for (const response of refused) {
      expect(['error.invoice.paid', 'error.invoice.attempt_pending']).toContain(response.json.error.message[0].code);
    }
    const attempt = createdAttempts[0]?.json;
    expect(attempt).toMatchObject({
      status: 'succeeded',
      payment_uuid: expect.any(String),
      invoice: { uuid: invoice.uuid, status: 'paid' },
      subscription: { uuid: created.uuid },
    });
    const after = await ok('GET', `/subscriptions/${created.uuid}/invoices/${invoice.uuid}`);
    expect(after.charge_attempts).toHaveLength(1);
    const payments = await ok('POST', '/search/payments', { query: { $match: { invoice_uuid: invoice.uuid } } });
    expect(payments.summary.hits).toBe(1);
  });

  it('a failed manual attempt leaves the invoice open for another one', async () => {
    const created = await subscription({ status: 'pending', payment_source_uuid: await savedSource(FAILING_CARD) });
    const invoice = await ok('POST', `/subscriptions/${created.uuid}/invoices`, {}, 201);
    const path = `/subscriptions/${created.uuid}/invoices/${invoice.uuid}/charge-attempts`;
    const first = await ok('POST', path, undefined, 201);
    expect(first.status).toBe('failed');
    expect(first.invoice).toMatchObject({ status: 'open', failed_payment_attempts: 1 });
    const second = await ok('POST', path, undefined, 201);
    expect(second.uuid).not.toBe(first.uuid);
    expect((await ok('GET', `/payments/${second.payment_uuid}`)).status).toBe('failed');
    advanceClock(DAY);
  });
});
