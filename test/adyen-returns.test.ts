import { advanceClock, derivedUuid, freezeClock, now } from '@svc/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, type AdyenHarness, adyenCalls, useAdyen } from './support/adyen-harness';
import type { AdyenStandIn } from './support/adyen-stand-in';
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
    await accepted();
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
