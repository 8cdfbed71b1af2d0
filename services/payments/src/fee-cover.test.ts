import { advanceClock, freezeClock, now } from '@svc/core';
import { DEFAULT_PAYMENT_METHOD_PROFILES, paymentMethodProfileSchema, upsertOrganisation } from '@svc/organisations';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { paymentEventData } from './event-data';
import { setProviderFault } from './providers/faults';
import { findPayment, paymentItem } from './repository/payment-repository';

/**
 * Donors who cover the fees (contract section 13, issue 48 point 1), through the API with the
 * simulated provider: the total that leaves the gift, per route candidate, the quote for donation
 * forms, refunds of the whole total, the search columns, the event data and `succeeded_at`.
 */
const FEES = { percent: '2.9', fixed: '30' };
const PROFILES = [
  ...DEFAULT_PAYMENT_METHOD_PROFILES,
  { name: 'card-fees', payment_method: 'card', provider: 'simulated', fees: FEES },
  // Adyen first with its own fees, the simulated provider behind it with its own.
  {
    name: 'card-route-fees',
    payment_method: 'card',
    raw_card_data: true,
    fees: { percent: '2', fixed: '10' },
    route: [
      { provider: 'adyen', merchant_account: 'CharityECOM', fees: { percent: '1.5', fixed: '20' } },
      { provider: 'simulated', fees: { percent: '3.4', fixed: '50' } },
    ],
  },
  // EUR to a candidate with its own fees; the rest to one with none of its own (the profile's).
  {
    name: 'card-route-mixed',
    payment_method: 'card',
    fees: { percent: '1', fixed: '0' },
    route: [
      { provider: 'simulated', when: { currency: ['EUR'] }, fees: { percent: '5', fixed: '100' } },
      { provider: 'simulated' },
    ],
  },
];

let token: string;
let otherToken: string;

beforeAll(async () => {
  const seed = await seedDemo();
  for (const organisation of seed.organisations) {
    const account = organisation.accounts.find((candidate) => candidate.uuid === DEMO.secondAccount);
    if (!account) continue;
    account.payment_method_profiles = PROFILES.map((profile) => paymentMethodProfileSchema.parse(profile));
    await upsertOrganisation(organisation);
  }
  token = await tokenFor(DEMO.client);
  otherToken = await tokenFor(DEMO.otherClient);
});

afterEach(() => {
  setProviderFault('adyen', null);
  delete process.env.SVC_ADYEN_API_KEY;
});

const GOOD_CARD = { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' };
const chf = (value: string) => ({ value, currency: 'CHF' });

function pay(body: Record<string, unknown>, bearer = token) {
  return call('POST', '/payments', {
    token: bearer,
    body: {
      account_uuid: DEMO.secondAccount,
      payment_method: 'card',
      profile: 'card-fees',
      amount: chf('2500'),
      payment_information: GOOD_CARD,
      ...body,
    },
  });
}

function quote(body: Record<string, unknown>, bearer = token) {
  return call('POST', '/payments/fee-quotes', {
    token: bearer,
    body: { account_uuid: DEMO.secondAccount, profile: 'card-fees', amount: chf('2500'), ...body },
  });
}

describe('a payment whose donor covers the fees', () => {
  it('charges the smallest total that leaves the gift: 25.00 CHF at 2.9 % + 0.30 is 26.06', async () => {
    const paid = await pay({ cover_fees: true });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json).toMatchObject({
      status: 'succeeded',
      amount: chf('2606'),
      intended_amount: chf('2500'),
      fee_cover_amount: chf('106'),
    });
    // The fee of 26.06 (2.9 % rounded up, plus 0.30) is 1.06: the charity keeps 25.00 exactly.
    expect(2606 - (Math.ceil((2606 * 29) / 1000) + 30)).toBe(2500);
    const fetched = await call('GET', `/payments/${paid.json.uuid}`, { token });
    expect(fetched.json).toEqual(paid.json);
  });

  it('shows the whole amount as the gift and no cover when the donor did not ask', async () => {
    const paid = await pay({});
    expect(paid.json).toMatchObject({ amount: chf('2500'), intended_amount: chf('2500'), fee_cover_amount: chf('0') });
    const notCovered = await pay({ cover_fees: false });
    expect(notCovered.json).toMatchObject({ amount: chf('2500'), fee_cover_amount: chf('0') });
  });

  it('is refused with 400 on cover_fees on a profile without fees, and nothing is charged', async () => {
    const refused = await pay({ profile: 'card', cover_fees: true, custom_parameters: { campaign: 'no-fees' } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].property).toBe('cover_fees');
    const found = await call('POST', '/search/payments', {
      token,
      body: { query: { $term: { 'custom_parameters.campaign': 'no-fees' } } },
    });
    expect(found.json.summary.hits).toBe(0);
  });

  it('is refused with 400 on amount.value where the total is past what can be counted', async () => {
    const refused = await pay({ cover_fees: true, amount: chf(String(Number.MAX_SAFE_INTEGER)) });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.message[0].property).toBe('amount.value');
  });

  it('refuses cover_fees on a payment source (nothing is charged)', async () => {
    const refused = await call('POST', '/payment-sources', {
      token,
      body: {
        account_uuid: DEMO.secondAccount,
        payment_method: 'card',
        profile: 'card-fees',
        amount: chf('100'),
        payment_information: GOOD_CARD,
        cover_fees: true,
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].property).toBe('cover_fees');
  });

  it('carries the three figures in its event data', async () => {
    const paid = (await pay({ cover_fees: true })).json;
    const record = await findPayment(paid.uuid);
    if (!record) throw new Error('stored');
    const [event] = record.events;
    if (!event) throw new Error('a succeeded payment carries its event');
    const data = await paymentEventData.payment?.build(event, paymentItem(record));
    expect(data).toMatchObject({
      amount: chf('2606'),
      intended_amount: chf('2500'),
      fee_cover_amount: chf('106'),
      succeeded_at: expect.any(Number),
    });
  });

  it('is refunded by default for the whole total', async () => {
    const paid = (await pay({ cover_fees: true })).json;
    const refund = await call('POST', `/payments/${paid.uuid}/refunds`, { token });
    expect(refund.status, refund.text).toBe(200);
    expect(refund.json.amount).toEqual(chf('2606'));
    const after = (await call('GET', `/payments/${paid.uuid}`, { token })).json;
    expect(after).toMatchObject({ refunded_amount: chf('2606'), amount: chf('2606'), intended_amount: chf('2500') });
  });
});

describe('a route whose candidates have different fees', () => {
  it('charges the total of the candidate actually charged: Adyen unusable here, the simulated provider’s own fees', async () => {
    const paid = await pay({ profile: 'card-route-fees', cover_fees: true, test_mode: true });
    expect(paid.status, paid.text).toBe(201);
    // 3.4 % + 0.50 on 25.00: ceil(2550 / 0.966) = 2640.
    expect(paid.json).toMatchObject({
      provider: 'simulated',
      providers_tried: [{ provider: 'adyen', reason: 'unusable' }],
      amount: chf('2640'),
      intended_amount: chf('2500'),
      fee_cover_amount: chf('140'),
    });
  });

  it('charges the next candidate’s total after a fail-over from one that refused the connection', async () => {
    process.env.SVC_ADYEN_API_KEY = 'test-key-of-the-fee-cover-test';
    setProviderFault('adyen', 'refuse');
    const paid = await pay({ profile: 'card-route-fees', cover_fees: true, test_mode: true });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json.providers_tried).toEqual([{ provider: 'adyen', reason: 'connection_refused' }]);
    expect(paid.json).toMatchObject({ provider: 'simulated', amount: chf('2640'), fee_cover_amount: chf('140') });
  });

  it('falls back to the profile’s fees for a candidate without its own, and uses each candidate’s own where it has them', async () => {
    const chfPaid = await pay({ profile: 'card-route-mixed', cover_fees: true });
    // 1 % + 0 on 25.00: ceil(2500 / 0.99) = 2526.
    expect(chfPaid.json).toMatchObject({ amount: chf('2526'), fee_cover_amount: chf('26') });
    const eurPaid = await pay({
      profile: 'card-route-mixed',
      cover_fees: true,
      amount: { value: '2500', currency: 'EUR' },
    });
    // 5 % + 1.00 on 25.00: ceil(2600 / 0.95) = 2737.
    expect(eurPaid.json).toMatchObject({
      amount: { value: '2737', currency: 'EUR' },
      intended_amount: { value: '2500', currency: 'EUR' },
      fee_cover_amount: { value: '237', currency: 'EUR' },
    });
  });
});

describe('POST /payments/fee-quotes', () => {
  it('answers the three figures a covered payment would charge, and the fees they cover', async () => {
    const quoted = await quote({});
    expect(quoted.status, quoted.text).toBe(200);
    expect(quoted.json).toEqual({
      amount: chf('2606'),
      intended_amount: chf('2500'),
      fee_cover_amount: chf('106'),
      fees: FEES,
      provider: 'simulated',
    });
    const paid = (await pay({ cover_fees: true })).json;
    expect(paid.amount).toEqual(quoted.json.amount);
  });

  it('quotes the candidate a new payment would try first', async () => {
    const routed = await quote({ profile: 'card-route-fees', test_mode: true });
    expect(routed.json).toMatchObject({ provider: 'simulated', amount: chf('2640'), fees: { percent: '3.4' } });
    process.env.SVC_ADYEN_API_KEY = 'test-key-of-the-fee-cover-test';
    // With a key, Adyen comes first: its own 1.5 % + 0.20 (ceil(2520 / 0.985) = 2559).
    const adyenFirst = await quote({ profile: 'card-route-fees', test_mode: true });
    expect(adyenFirst.json).toMatchObject({ provider: 'adyen', amount: chf('2559'), fee_cover_amount: chf('59') });
  });

  it('is 400 on profile for a profile without fees or an unknown one', async () => {
    for (const profile of ['card', 'nope']) {
      const refused = await quote({ profile });
      expect(refused.status, profile).toBe(400);
      expect(refused.json.error.message[0].property).toBe('profile');
    }
    expect((await quote({ amount: chf('0') })).status).toBe(400);
    expect((await quote({ cover_fees: true })).status).toBe(400);
  });

  it('is grant-checked like POST /payments: 403 on an account not granted, 404 on none', async () => {
    expect((await quote({}, otherToken)).status).toBe(403);
    expect((await quote({ account_uuid: '11111111-2222-4333-8444-555555555555' })).status).toBe(404);
    expect((await call('POST', '/payments/fee-quotes', { body: {} })).status).toBe(401);
  });
});

describe('succeeded_at', () => {
  it('is the service time the payment first succeeded, and stays through a refund', async () => {
    const paidAt = freezeClock(now());
    const paid = (await pay({})).json;
    expect(paid.succeeded_at).toBe(paidAt);
    advanceClock(3_600);
    token = await tokenFor(DEMO.client);
    await call('POST', `/payments/${paid.uuid}/refunds`, { token, body: { amount: chf('100') } });
    expect((await call('GET', `/payments/${paid.uuid}`, { token })).json.succeeded_at).toBe(paidAt);
  });

  it('is absent while a payment waits for the donor, and the time of the approval once approved', async () => {
    freezeClock(now());
    const pending = (await pay({ payment_information: { ...GOOD_CARD, number: '4000000000003220' } })).json;
    expect(pending.status).toBe('pending');
    expect(pending.succeeded_at).toBeUndefined();
    const approvedAt = advanceClock(600);
    const url = new URL(pending.action.url);
    await call('POST', url.pathname, {
      rawBody: new URLSearchParams({ token: url.searchParams.get('token') ?? '', decision: 'approve' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const approved = (await call('GET', `/payments/${pending.uuid}`, { token })).json;
    expect(approved).toMatchObject({ status: 'succeeded', succeeded_at: approvedAt });
    const failed = (await pay({ payment_information: { ...GOOD_CARD, number: '4000000000000002' } })).json;
    expect(failed.succeeded_at).toBeUndefined();
  });
});

describe('search over the fee cover, the supporter and succeeded_at', () => {
  it('finds and sums payments by intended_amount.value and fee_cover_amount.value, and by supporter and succeeded_at', async () => {
    const campaign = { campaign: 'fee-cover-search' };
    const supporter = { first_name: 'Ada', last_name: 'Donor', email: 'ada.fees@example.org' };
    const covered = (await pay({ cover_fees: true, custom_parameters: campaign, supporter, create_supporter: true }))
      .json;
    const plain = (await pay({ amount: chf('2606'), custom_parameters: campaign })).json;
    const search = async (query: unknown, extra: Record<string, unknown> = {}) => {
      const response = await call('POST', '/search/payments', {
        token,
        body: { query: { $and: [{ $term: { 'custom_parameters.campaign': campaign.campaign } }, query] }, ...extra },
      });
      expect(response.status, response.text).toBe(200);
      return response.json;
    };
    const uuids = (found: { hits: Array<{ uuid: string }> }) => found.hits.map((hit) => hit.uuid).sort();
    // Both charged 26.06; only one of them gave 25.00 and covered 1.06.
    expect(uuids(await search({ $term: { 'amount.value': '2606' } }))).toEqual([covered.uuid, plain.uuid].sort());
    expect(uuids(await search({ $term: { 'intended_amount.value': '2500' } }))).toEqual([covered.uuid]);
    expect(uuids(await search({ $range: { 'fee_cover_amount.value': { gt: 0 } } }))).toEqual([covered.uuid]);
    expect(uuids(await search({ $term: { 'fee_cover_amount.value': '0' } }))).toEqual([plain.uuid]);
    const sums = await search(
      { $match: {} },
      {
        size: 0,
        aggs: {
          given: { type: 'sum', field: 'intended_amount.value' },
          covered: { type: 'sum', field: 'fee_cover_amount.value' },
        },
      },
    );
    expect(sums.aggregations).toEqual({
      given: [{ key: 'sum', value: 2500 + 2606 }],
      covered: [{ key: 'sum', value: 106 }],
    });
    expect(uuids(await search({ $term: { supporter_uuid: covered.supporter_uuid } }))).toEqual([covered.uuid]);
    expect(uuids(await search({ $range: { succeeded_at: { gte: covered.succeeded_at } } }))).toEqual(
      [covered.uuid, plain.uuid].sort(),
    );
  });
});
