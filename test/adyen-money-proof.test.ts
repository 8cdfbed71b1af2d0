import { advanceClock, derivedUuid, freezeClock, logger, newUuid, now } from '@svc/core';
import * as table from '@svc/table';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EARLY_UNRECORDED_AFTER_SECONDS,
  UNRECORDED_PAYMENT,
} from '../services/payments/src/domain/early-callback-store';
import { ACCOUNT, type AdyenHarness, adyenCalls, adyenCard, MERCHANT, useAdyen } from './support/adyen-harness';
import { ADYEN_TEST_CARDS, type AdyenStandIn } from './support/adyen-stand-in';
import { call, DEMO, tokenFor } from './support/api';
import { expectReopenedInvoice, expectReturnedDebit, RETURNED_DEBIT_EVENTS } from './support/debit-return';
import { streamEvents } from './support/stream';

/**
 * Issue 45, point 3: a bank return is not a paid donation. Adyen reports a SEPA debit the donor's
 * bank returned as a CHARGEBACK (reason AC04 and the like); it leaves the payment as Stripe's
 * SEPA return does (test/stripe-money-safety.test.ts asserts the same, test/support/debit-return.ts)
 * and reopens the recurring invoice it paid, so dunning runs.
 */
const harness: AdyenHarness = useAdyen();
const { api, pay, notify, getPayment, atAdyen } = adyenCalls(harness);
let adyen: AdyenStandIn;
beforeAll(() => {
  adyen = harness.adyen;
  freezeClock(Math.floor(Date.now() / 1000));
});
afterEach(() => {
  adyen.takeNotifications();
});

const IBAN = { iban: 'DE89 3704 0044 0532 0130 00', account_holder: 'Ada Donor' };
const eventsOf = async (uuid: string) =>
  (await streamEvents()).filter((e) => e.object_uuid === uuid).map((e) => e.name);
async function accepted(): Promise<void> {
  const response = await notify();
  expect(response.status, response.text).toBe(200);
  expect(response.text).toBe('[accepted]');
}
const pspOf = (reference: string) => {
  const made = atAdyen(reference);
  expect(made).toHaveLength(1);
  return made[0]?.pspReference as string;
};

describe('a SEPA debit returned after Adyen settled it', () => {
  it('is a lost dispute with its funds withdrawn, as on Stripe, announced once', async () => {
    const debit = await pay({
      payment_method: 'sepa_dd',
      profile: 'sepa-adyen',
      amount: { value: '5000', currency: 'EUR' },
      payment_information: IBAN,
    });
    expect(debit.status, debit.text).toBe(201);
    const psp = pspOf(debit.json.uuid);
    adyen.settle(psp, 'success');
    await accepted();
    adyen.chargeback(psp);
    await accepted();
    const returned = await getPayment(debit.json.uuid);
    expectReturnedDebit(returned, '5000', 'EUR');
    expect(returned.dispute.reason).toBe('Closed Account Number');
    // Delivered again: nothing moves twice.
    adyen.chargeback(psp);
    await accepted();
    expect(await eventsOf(debit.json.uuid)).toEqual([...RETURNED_DEBIT_EVENTS]);
  });

  it('reopens the recurring invoice it paid; dunning charges again on the plan’s day, once', async () => {
    const supporter = await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
    const source = await api('POST', '/payment-sources', {
      account_uuid: ACCOUNT,
      payment_method: 'sepa_dd',
      profile: 'sepa-adyen',
      amount: { value: '2100', currency: 'EUR' },
      payment_information: IBAN,
      test_mode: true,
    });
    expect(source.status, source.text).toBe(201);
    // The mandate's zero-value debit settles like any debit: by Adyen's notification.
    expect(source.json.status).toBe('pending');
    adyen.settle(pspOf(source.json.uuid), 'success');
    await accepted();
    expect((await api('GET', `/payment-sources/${source.json.uuid}`)).json.status).toBe('active');
    const subscription = await api('POST', '/subscriptions', {
      account_uuid: ACCOUNT,
      payment_source_uuid: source.json.uuid,
      supporter_uuid: supporter.json.uuid,
      currency: 'EUR',
      amount: 2100,
      recurring_interval: 'monthly',
      status: 'active',
      test_mode: true,
    });
    expect(subscription.status, subscription.text).toBe(201);
    await call('POST', '/_local/billing-run');
    const invoices = async () => (await api('GET', `/subscriptions/${subscription.json.uuid}/invoices`)).json;
    const [invoice] = await invoices();
    const attempt = invoice.charge_attempts[0].uuid as string;
    const paymentUuid = derivedUuid('payment', attempt);
    const psp = pspOf(attempt);
    adyen.settle(psp, 'success');
    await accepted();
    expect((await invoices())[0]).toMatchObject({ status: 'paid', charge_attempts: [{ status: 'succeeded' }] });

    adyen.chargeback(psp);
    // The same return delivered twice at once (Adyen retries; two workers): reopened once.
    const batch = JSON.stringify(adyen.takeNotifications());
    const both = await Promise.all(
      [batch, batch].map((rawBody) =>
        call('POST', '/providers/adyen/notifications', { rawBody, headers: { 'content-type': 'application/json' } }),
      ),
    );
    expect(both.map((r) => r.text)).toEqual(['[accepted]', '[accepted]']);
    expectReturnedDebit(await getPayment(paymentUuid), '2100', 'EUR');
    const [reopened] = await invoices();
    expectReopenedInvoice(reopened);
    expect(reopened.next_attempt_date).toEqual(expect.any(Number));
    const failed = (await streamEvents()).filter((e) => e.object_uuid === attempt).map((e) => e.name);
    expect(failed).toEqual(['svc.subscriptions.charge_attempt.failed']);
    // The same return again changes nothing: one failed attempt.
    adyen.chargeback(psp);
    await accepted();
    expect((await invoices())[0].failed_payment_attempts).toBe(1);

    // Dunning: the next attempt on its day, a new debit at Adyen.
    advanceClock(Number(reopened.next_attempt_date) - now() + 60);
    harness.token = await tokenFor(DEMO.client);
    await call('POST', '/_local/billing-run');
    const [retried] = await invoices();
    expect(retried.charge_attempts).toHaveLength(2);
    expect(retried.charge_attempts[1]).toMatchObject({ status: 'pending' });
    expect(atAdyen(retried.charge_attempts[1].uuid)).toHaveLength(1);
  });
});

type Item = Record<string, unknown> & { eventCode?: string; success?: string };
const itemsOf = (body: ReturnType<AdyenStandIn['takeNotifications']>): Item[] =>
  body.notificationItems.map((entry) => entry.NotificationRequestItem as Item);
const deliver = (items: Item[]) =>
  call('POST', '/providers/adyen/notifications', {
    rawBody: JSON.stringify({ live: 'false', notificationItems: items.map((i) => ({ NotificationRequestItem: i })) }),
    headers: { 'content-type': 'application/json' },
  });

describe('a charge Adyen made is never failed (issue 45, point 6)', () => {
  it('records a payment paid from Adyen’s refusal to cancel it because it was captured, with no AUTHORISATION', async () => {
    const pending = await pay({ payment_method: 'twint', profile: 'twint-adyen' });
    const uuid = pending.json.uuid;
    adyen.approve(pspOf(uuid), true);
    expect((await api('POST', `/payments/${uuid}/cancel`)).json.status).toBe('cancelled');
    const items = itemsOf(adyen.takeNotifications());
    const refusal = items.find((i) => i.eventCode === 'TECHNICAL_CANCEL') as Item;
    expect(refusal).toMatchObject({ success: 'false', reason: 'Payment already captured' });
    // Adyen's AUTHORISATION never comes: the refused cancel alone proves the money.
    expect((await deliver([refusal])).text).toBe('[accepted]');
    expect(await getPayment(uuid)).toMatchObject({ status: 'succeeded' });
    expect(await eventsOf(uuid)).toEqual(['svc.payments.payment.cancelled', 'svc.payments.payment.succeeded']);
    // Again: nothing more.
    expect((await deliver([refusal])).text).toBe('[accepted]');
    expect(await eventsOf(uuid)).toHaveLength(2);
  });

  it('changes nothing for a cancel refused for another reason, or one that binds to no payment of its account', async () => {
    const pending = await pay({ payment_method: 'twint', profile: 'twint-adyen' });
    const uuid = pending.json.uuid;
    expect((await api('POST', `/payments/${uuid}/cancel`)).json.status).toBe('cancelled');
    const [cancel] = itemsOf(adyen.takeNotifications());
    const other = adyen.sign({ ...cancel, success: 'false', reason: 'Payment not found' });
    const elsewhere = adyen.sign({
      ...cancel,
      success: 'false',
      reason: 'Payment already captured',
      merchantAccountCode: 'SomeoneElses',
    });
    expect((await deliver([other, elsewhere])).text).toBe('[accepted]');
    expect(await getPayment(uuid)).toMatchObject({ status: 'cancelled' });
  });

  it('records a recurring charge we had failed that Adyen reports paid after all: attempt, payment and invoice paid', async () => {
    const supporter = await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
    const source = await api('POST', '/payment-sources', {
      account_uuid: ACCOUNT,
      payment_method: 'sepa_dd',
      profile: 'sepa-adyen',
      amount: { value: '1900', currency: 'EUR' },
      payment_information: IBAN,
      test_mode: true,
    });
    adyen.settle(pspOf(source.json.uuid), 'success');
    await accepted();
    const subscription = await api('POST', '/subscriptions', {
      account_uuid: ACCOUNT,
      payment_source_uuid: source.json.uuid,
      supporter_uuid: supporter.json.uuid,
      currency: 'EUR',
      amount: 1900,
      recurring_interval: 'monthly',
      status: 'active',
      test_mode: true,
    });
    expect(subscription.status, subscription.text).toBe(201);
    await call('POST', '/_local/billing-run');
    const invoices = async () => (await api('GET', `/subscriptions/${subscription.json.uuid}/invoices`)).json;
    const attempt = (await invoices())[0].charge_attempts[0].uuid as string;
    const paymentUuid = derivedUuid('payment', attempt);
    adyen.settle(pspOf(attempt), 'failure');
    const [refused] = itemsOf(adyen.takeNotifications());
    expect(refused).toMatchObject({ eventCode: 'AUTHORISATION', success: 'false' });
    expect((await deliver([refused as Item])).text).toBe('[accepted]');
    expect((await invoices())[0]).toMatchObject({ status: 'open', charge_attempts: [{ status: 'failed' }] });
    expect(await getPayment(paymentUuid)).toMatchObject({ status: 'failed' });

    // Adyen reports it authorised after all.
    const paid = adyen.sign({ ...refused, success: 'true', reason: '' });
    expect((await deliver([paid])).text).toBe('[accepted]');
    const [invoice] = await invoices();
    expect(invoice).toMatchObject({ status: 'paid', charge_attempts: [{ status: 'succeeded' }] });
    expect(invoice.next_attempt_date).toBeUndefined();
    const payment = await getPayment(paymentUuid);
    expect(payment).toMatchObject({ status: 'succeeded' });
    expect(payment.status_reason).toBeUndefined();
    expect(await eventsOf(paymentUuid)).toEqual(['svc.payments.payment.failed', 'svc.payments.payment.succeeded']);
    expect(await eventsOf(invoice.uuid)).toContain('svc.subscriptions.invoice.paid');
    // Delivered again: recorded once.
    expect((await deliver([paid])).text).toBe('[accepted]');
    expect(await eventsOf(paymentUuid)).toHaveLength(2);
  });
});

describe('an AUTHORISATION before its payment is written (issue 45, point 6)', () => {
  /** Fails the next write of a new payment, as a request that dies after Adyen charged. */
  function dieAtPaymentWrite() {
    const client = table.db();
    const send = client.send.bind(client);
    const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown) => {
      const input = (command as { input?: { TransactItems?: Array<{ Put?: { Item?: { pk?: string } } }> } }).input;
      const item = input?.TransactItems?.[0]?.Put?.Item ?? (input as { Item?: { pk?: string } } | undefined)?.Item;
      if (typeof item?.pk === 'string' && item.pk.startsWith('PAYMENT#')) {
        spy.mockRestore();
        throw new Error('the process died here');
      }
      return send(command as never);
    }) as never);
    return spy;
  }

  it('is kept and accepted, and applied when the request’s re-run writes the payment pending', async () => {
    const body = {
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-adyen',
      amount: { value: '2500', currency: 'CHF' },
      test_mode: true,
      payment_information: adyenCard(ADYEN_TEST_CARDS.visa),
    };
    const key = `early-${newUuid()}`;
    const post = () => call('POST', '/payments', { token: harness.token, headers: { 'idempotency-key': key }, body });
    const charged = adyen.requests.filter((r) => r.path === '/v72/payments').length;
    dieAtPaymentWrite();
    expect((await post()).status).toBeGreaterThanOrEqual(500);
    expect(adyen.requests.filter((r) => r.path === '/v72/payments').length).toBe(charged + 1);
    // Adyen's AUTHORISATION names a payment we never wrote: kept, accepted (no 503 to retry).
    const batch = itemsOf(adyen.takeNotifications());
    const authorisation = batch.find((i) => i.eventCode === 'AUTHORISATION') as Item;
    expect(authorisation).toMatchObject({ success: 'true' });
    expect((await deliver([authorisation])).text).toBe('[accepted]');
    const reference = String(authorisation.merchantReference);
    expect(await getPayment(reference)).toMatchObject({ error: expect.anything() });
    // The re-run reaches Adyen again and gets no answer: written pending, then the kept
    // AUTHORISATION settles it in the same request.
    adyen.fault('timeout');
    const rerun = await post();
    adyen.fault(null);
    expect(rerun.status, rerun.text).toBe(201);
    expect(rerun.json).toMatchObject({ uuid: reference, status: 'succeeded' });
    expect(await eventsOf(reference)).toEqual(['svc.payments.payment.succeeded']);
    // Nothing left for the resolver: no alarm an hour on.
    const errors = vi.spyOn(logger, 'error');
    advanceClock(EARLY_UNRECORDED_AFTER_SECONDS + 60);
    harness.token = await tokenFor(DEMO.client);
    await call('POST', '/_local/settle', { token: harness.token });
    expect(errors).not.toHaveBeenCalledWith(UNRECORDED_PAYMENT, expect.anything());
    errors.mockRestore();
  });

  it('alarms once when the payment is never written', async () => {
    const reference = newUuid();
    const item = adyen.sign({
      amount: { currency: 'CHF', value: 2500 },
      eventCode: 'AUTHORISATION',
      eventDate: new Date(now() * 1000).toISOString(),
      merchantAccountCode: MERCHANT,
      merchantReference: reference,
      pspReference: 'ABCDEFGH12345678',
      reason: '',
      success: 'true',
    });
    expect((await deliver([item])).text).toBe('[accepted]');
    const errors = vi.spyOn(logger, 'error');
    advanceClock(EARLY_UNRECORDED_AFTER_SECONDS + 60);
    harness.token = await tokenFor(DEMO.client);
    await call('POST', '/_local/settle', { token: harness.token });
    await call('POST', '/_local/settle', { token: harness.token });
    expect(errors.mock.calls.filter(([message]) => message === UNRECORDED_PAYMENT)).toEqual([
      [UNRECORDED_PAYMENT, expect.objectContaining({ provider: 'adyen', reference })],
    ]);
    errors.mockRestore();
  });
});
