import { freezeClock, logger, newUuid } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CALLBACK_UNBOUND } from '../services/payments/src/domain/provider-binding';
import { PAID_AT_OTHER_PROVIDER } from '../services/payments/src/domain/provider-updates';
import { adyenCalls, adyenCard, MERCHANT, useAdyen } from './support/adyen-harness';
import { ADYEN_TEST_CARDS } from './support/adyen-stand-in';
import { call, DEMO, GOOD_CARD_INFORMATION, tokenFor } from './support/api';

/**
 * Issue 44: Adyen's notifications are signed with one key for every merchant account of the
 * platform, and `merchantReference` is free text any of them can set. Before the binding check,
 * `refunded()`, `chargeback()` and `authorisation()` compared neither the provider, the
 * merchant account, `live`, the pspReference nor the amount: any signed item naming our payment
 * changed it. Now each field is compared (domain/provider-binding.ts), and an item that does not
 * bind is accepted (`[accepted]`, so Adyen does not retry it) and changes nothing.
 */
const harness = useAdyen();
const { pay, getPayment, atAdyen } = adyenCalls(harness);
let otherToken: string;

beforeAll(async () => {
  otherToken = await tokenFor(DEMO.otherClient);
});
beforeEach(() => {
  freezeClock(Math.floor(Date.now() / 1000));
  harness.adyen.takeNotifications();
});

/** A batch of signed items as Adyen POSTs it. */
const send = (items: Array<Record<string, unknown>>, live: 'true' | 'false' = 'false') =>
  call('POST', '/providers/adyen/notifications', {
    rawBody: JSON.stringify({
      live,
      notificationItems: items.map((item) => ({ NotificationRequestItem: harness.adyen.sign(item) })),
    }),
    headers: { 'content-type': 'application/json' },
  });

/** Our Adyen card payment, paid, and its pspReference at Adyen. */
async function paidOnAdyen() {
  const paid = await pay({ payment_information: adyenCard(ADYEN_TEST_CARDS.visa) });
  expect(paid.json.status, paid.text).toBe('succeeded');
  const psp = String(atAdyen(paid.json.uuid)[0]?.pspReference);
  return { uuid: paid.json.uuid as string, psp };
}

const item = (fields: Record<string, unknown>) => ({
  pspReference: `ATTACK${Math.floor(Math.random() * 1e9)}`,
  merchantAccountCode: MERCHANT,
  eventDate: new Date().toISOString(),
  success: 'true',
  reason: '',
  amount: { value: 2500, currency: 'CHF' },
  ...fields,
});

describe('an Adyen notification changes only what its merchant account holds', () => {
  const refundOf = (payment: { uuid: string; psp: string }, fields: Record<string, unknown> = {}) =>
    item({
      eventCode: 'REFUND',
      merchantReference: `${payment.uuid}:${newUuid()}`,
      originalReference: payment.psp,
      ...fields,
    });
  const chargebackOf = (payment: { uuid: string; psp: string }, fields: Record<string, unknown> = {}) =>
    item({ eventCode: 'CHARGEBACK', merchantReference: payment.uuid, originalReference: payment.psp, ...fields });

  it.each([
    ['another merchant account', { merchantAccountCode: 'SomeoneElses' }, 'false'],
    ['live money on a test payment', {}, 'true'],
    ['another payment’s pspReference', { originalReference: 'NOTOURS0000000001' }, 'false'],
    ['another currency', { amount: { value: 2500, currency: 'EUR' } }, 'false'],
    ['more than the payment', { amount: { value: 2501, currency: 'CHF' } }, 'false'],
  ] as const)('refuses a refund and a chargeback from %s', async (_name, fields, live) => {
    const payment = await paidOnAdyen();
    const answer = await send([refundOf(payment, fields), chargebackOf(payment, fields)], live);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toBe('[accepted]');
    const after = await getPayment(payment.uuid);
    expect(after.refunds).toEqual([]);
    expect(after.dispute).toBeUndefined();
    // The same items, bound, are applied: the check binds, it does not block.
    await send([refundOf(payment), chargebackOf(payment)]);
    const bound = await getPayment(payment.uuid);
    expect(bound.refunds).toMatchObject([{ status: 'succeeded', amount: { value: '2500' } }]);
    expect(bound.dispute).toMatchObject({ status: 'charged_back' });
  });

  it('refuses a refund naming another charity’s payment on the simulated provider', async () => {
    const victim = await call('POST', '/payments', {
      token: otherToken,
      body: {
        account_uuid: DEMO.otherAccount,
        payment_method: 'card',
        profile: 'card',
        amount: { value: '2500', currency: 'CHF' },
        payment_information: GOOD_CARD_INFORMATION,
      },
    });
    expect(victim.json.status, victim.text).toBe('succeeded');
    const errors = vi.spyOn(logger, 'error');
    const answer = await send([
      refundOf({ uuid: victim.json.uuid, psp: 'ATTACKERPSP00001' }),
      chargebackOf({ uuid: victim.json.uuid, psp: 'ATTACKERPSP00001' }),
      // “Paid” about a payment Adyen never had a part in: bound before any double-charge alarm.
      item({ eventCode: 'AUTHORISATION', merchantReference: victim.json.uuid, merchantAccountCode: 'SomeoneElses' }),
    ]);
    expect(answer.text).toBe('[accepted]');
    expect(errors).toHaveBeenCalledWith(CALLBACK_UNBOUND, expect.objectContaining({ object: victim.json.uuid }));
    expect(errors).not.toHaveBeenCalledWith(PAID_AT_OTHER_PROVIDER, expect.anything());
    errors.mockRestore();
    const after = (await call('GET', `/payments/${victim.json.uuid}`, { token: otherToken })).json;
    expect(after.refunds).toEqual([]);
    expect(after.dispute).toBeUndefined();
  });

  it('does not decide a pending payment from an authorisation of another amount, account or pspReference', async () => {
    const pending = await pay({ payment_information: adyenCard(ADYEN_TEST_CARDS.threeDS2) });
    expect(pending.json.status, pending.text).toBe('pending');
    const uuid = pending.json.uuid as string;
    const psp = String(atAdyen(uuid)[0]?.pspReference);
    const authorised = (fields: Record<string, unknown>) =>
      item({ eventCode: 'AUTHORISATION', merchantReference: uuid, pspReference: psp, ...fields });
    await send([
      authorised({ amount: { value: 1, currency: 'CHF' } }),
      authorised({ merchantAccountCode: 'SomeoneElses', pspReference: 'OTHERPSP00000001' }),
      authorised({ pspReference: 'OTHERPSP00000002' }),
    ]);
    await send([authorised({ pspReference: 'OTHERPSP00000003' })], 'true');
    expect((await getPayment(uuid)).status).toBe('pending');
    await send([authorised({})]);
    expect((await getPayment(uuid)).status).toBe('succeeded');
  });
});
