import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { freezeClock } from '@svc/core';
import { db, tableName } from '@svc/table';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { streamEvents } from '../../../test/support/stream';

let token: string;
let otherToken: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  otherToken = await tokenFor(DEMO.otherClient);
});

const card = (number: string, extra: Record<string, unknown> = {}) => ({
  number,
  expiry_month: 12,
  expiry_year: 2099,
  cvv: '123',
  cardholder: 'Ada Donor',
  ...extra,
});

function pay(body: Record<string, unknown> = {}, bearer = token, headers: Record<string, string> = {}) {
  return call('POST', '/payments', {
    token: bearer,
    headers,
    body: {
      account_uuid: DEMO.secondAccount,
      payment_method: 'card',
      profile: 'card',
      amount: { value: '2500', currency: 'CHF' },
      payment_information: card('4242424242424242'),
      ...body,
    },
  });
}

describe('card payments with the simulated provider', () => {
  it.each([
    ['4242424242424242', 'succeeded', undefined, 'visa'],
    ['5555555555554444', 'succeeded', undefined, 'mastercard'],
    ['4000000000000002', 'failed', 'card_declined', 'visa'],
    ['4000000000009995', 'failed', 'insufficient_funds', 'visa'],
    ['4000000000000341', 'succeeded', undefined, 'visa'],
    ['4000000000003220', 'pending', undefined, 'visa'],
  ])('card %s ends %s (%s)', async (number, status, reason, brand) => {
    const response = await pay({ payment_information: card(number) });
    expect(response.status).toBe(201);
    expect(response.json.status).toBe(status);
    expect(response.json.status_reason).toBe(reason);
    expect(response.json.payment_information).toEqual({
      brand,
      last4: number.slice(-4),
      expiry_month: 12,
      expiry_year: 2099,
      cardholder: 'Ada Donor',
      fingerprint: expect.any(String),
    });
    if (status === 'pending') {
      expect(response.json.action).toEqual({
        action_type: 'redirect',
        url: expect.stringContaining('/simulated/payments/'),
      });
    } else {
      expect(response.json.action).toBeUndefined();
    }
  });

  it('returns the full payment shape', async () => {
    const response = await pay({
      locale: 'de_CH',
      return_url: 'https://charity.example.org/thanks',
      custom_parameters: { campaign: 'spring' },
    });
    expect(response.json).toEqual({
      uuid: expect.any(String),
      organisation_uuid: DEMO.org,
      account_uuid: DEMO.secondAccount,
      created: expect.any(Number),
      status: 'succeeded',
      succeeded_at: expect.any(Number),
      test_mode: false,
      amount: { value: '2500', currency: 'CHF' },
      intended_amount: { value: '2500', currency: 'CHF' },
      fee_cover_amount: { value: '0', currency: 'CHF' },
      refunded_amount: { value: '0', currency: 'CHF' },
      payment_method: 'card',
      profile: 'card',
      provider: 'simulated',
      locale: 'de_CH',
      return_url: 'https://charity.example.org/thanks',
      payment_information: expect.any(Object),
      refunds: [],
      custom_parameters: { campaign: 'spring' },
      svc_parameters: {},
    });
    const fetched = await call('GET', `/payments/${response.json.uuid}`, { token });
    expect(fetched.json).toEqual(response.json);
  });

  it('gives the same card the same fingerprint and another card another', async () => {
    const a = await pay();
    const b = await pay();
    const c = await pay({ payment_information: card('5555555555554444') });
    expect(a.json.payment_information.fingerprint).toBe(b.json.payment_information.fingerprint);
    expect(a.json.payment_information.fingerprint).not.toBe(c.json.payment_information.fingerprint);
  });

  it('refuses a number failing Luhn, a past expiry and a bad CVV with 400 on the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [card('4242424242424241'), 'payment_information.number'],
      [card('4242424242424242', { expiry_year: 2020 }), 'payment_information.expiry_year'],
      [card('4242424242424242', { expiry_month: 13 }), 'payment_information.expiry_month'],
      [card('4242424242424242', { cvv: '12' }), 'payment_information.cvv'],
      [{ expiry_month: 1, expiry_year: 2099, cvv: '123' }, 'payment_information.number'],
    ];
    for (const [information, property] of cases) {
      const response = await pay({ payment_information: information });
      expect(response.status, property).toBe(400);
      expect(response.json.error.message[0].property).toBe(property);
    }
  });

  it('never stores or logs a card number or CVV', async () => {
    await pay({ payment_information: card('4000000000000341', { cvv: '987' }) });
    await pay({ payment_information: card('5555555555554444', { cvv: '4321' }), create_payment_source: true });
    const dump = JSON.stringify((await db().send(new ScanCommand({ TableName: tableName() }))).Items);
    for (const secret of [
      '4242424242424242',
      '5555555555554444',
      '4000000000000341',
      '4000000000003220',
      '"987"',
      '"4321"',
      '"cvv"',
    ]) {
      expect(dump).not.toContain(secret);
    }
  });

  it('lets the donor approve or decline the 3-D Secure card, then returns to return_url', async () => {
    for (const [decision, status] of [
      ['approve', 'succeeded'],
      ['decline', 'failed'],
    ] as const) {
      const created = await pay({
        payment_information: card('4000000000003220'),
        return_url: 'https://charity.example.org/done',
      });
      const url = new URL(created.json.action.url);
      const page = await call('GET', `${url.pathname}${url.search}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Approve');
      const wrongToken = await call('GET', `${url.pathname}?token=nope`);
      expect(wrongToken.status).toBe(404);
      const decided = await call('POST', url.pathname, {
        rawBody: new URLSearchParams({ token: url.searchParams.get('token') ?? '', decision }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(decided.status).toBe(303);
      expect(decided.headers.location).toBe(
        `https://charity.example.org/done?payment_uuid=${created.json.uuid}&status=${status}`,
      );
      const after = await call('GET', `/payments/${created.json.uuid}`, { token });
      expect(after.json.status).toBe(status);
      expect(after.json.action).toBeUndefined();
      expect((await call('GET', `${url.pathname}?token=nope`)).status).toBe(404);
      const again = await call('GET', `${url.pathname}${url.search}`);
      expect(again.text).toContain(`already <strong>${status}</strong>`);
    }
  });
});

describe('TWINT and SEPA direct debit', () => {
  it('makes TWINT pending with a redirect that the donor approves', async () => {
    const created = await pay({ payment_method: 'twint', profile: 'twint', payment_information: undefined });
    expect(created.json.status).toBe('pending');
    const url = new URL(created.json.action.url);
    await call('POST', url.pathname, { body: { token: url.searchParams.get('token'), decision: 'approve' } });
    expect((await call('GET', `/payments/${created.json.uuid}`, { token })).json.status).toBe('succeeded');
  });

  it('charges a valid IBAN and refuses one failing mod-97', async () => {
    const ok = await pay({
      payment_method: 'sepa_dd',
      profile: 'sepa_dd',
      payment_information: { iban: 'CH93 0076 2011 6238 5295 7' },
    });
    expect(ok.json.status).toBe('succeeded');
    expect(ok.json.payment_information).toEqual({ iban: 'CH93*************2957', country_code: 'CH' });
    const bad = await pay({
      payment_method: 'sepa_dd',
      profile: 'sepa_dd',
      payment_information: { iban: 'CH94 0076 2011 6238 5295 7' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message[0].property).toBe('payment_information.iban');
  });
});

describe('initialising a payment refuses bad input', () => {
  it('with clear 4xx errors', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ profile: 'nope' }, 400, 'profile'],
      [{ payment_method: 'paypal' }, 400, 'payment_method'],
      [{ amount: { value: '0', currency: 'CHF' } }, 400, 'amount.value'],
      [{ amount: { value: '12.50', currency: 'CHF' } }, 400, 'amount.value'],
      [{ amount: { value: '100', currency: 'chf' } }, 400, 'amount.currency'],
      [{ account_uuid: '11111111-2222-4333-8444-555555555555' }, 404, ''],
      [{ subscription: { recurring_interval: 'monthly' } }, 400, 'create_payment_source'],
      [
        { create_payment_source: true, subscription: { recurring_interval: 'hourly' } },
        400,
        'subscription.recurring_interval',
      ],
      [{ create_payment_source: true, subscription: { interval: 'monthly' } }, 400, 'subscription.interval'],
      [{ unexpected: true }, 400, 'unexpected'],
    ];
    for (const [body, status, property] of cases) {
      const response = await pay(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      if (property)
        expect(response.json.error.message.map((d: { property: string }) => d.property)).toContain(property);
    }
  });

  it('accepts the amount as a positive integer too', async () => {
    const response = await pay({ amount: { value: 1999, currency: 'EUR' } });
    expect(response.json.amount).toEqual({ value: '1999', currency: 'EUR' });
  });
});

describe('refunds', () => {
  it('refund the whole residual without an amount, and parts with one', async () => {
    const payment = (await pay({ amount: { value: '1000', currency: 'CHF' } })).json;
    const part = await call('POST', `/payments/${payment.uuid}/refunds`, {
      token,
      body: { amount: { value: '300', currency: 'CHF' } },
    });
    expect(part.status).toBe(200);
    expect(part.json).toEqual({
      uuid: expect.any(String),
      payment_uuid: payment.uuid,
      created: expect.any(Number),
      amount: { value: '300', currency: 'CHF' },
      status: 'succeeded',
    });
    const rest = await call('POST', `/payments/${payment.uuid}/refunds`, { token });
    expect(rest.json.amount).toEqual({ value: '700', currency: 'CHF' });
    const after = await call('GET', `/payments/${payment.uuid}`, { token });
    expect(after.json.status).toBe('succeeded');
    expect(after.json.refunded_amount).toEqual({ value: '1000', currency: 'CHF' });
    expect(after.json.refunds).toHaveLength(2);
    const none = await call('POST', `/payments/${payment.uuid}/refunds`, { token });
    expect(none.status).toBe(400);
  });

  it('refuse an amount above the residual, zero, another currency, and unpaid payments', async () => {
    const payment = (await pay({ amount: { value: '1000', currency: 'CHF' } })).json;
    for (const amount of [
      { value: '1001', currency: 'CHF' },
      { value: '0', currency: 'CHF' },
      { value: '10', currency: 'EUR' },
    ]) {
      const response = await call('POST', `/payments/${payment.uuid}/refunds`, { token, body: { amount } });
      expect(response.status, JSON.stringify(amount)).toBe(400);
    }
    const failed = (await pay({ payment_information: card('4000000000000002') })).json;
    expect((await call('POST', `/payments/${failed.uuid}/refunds`, { token })).status).toBe(400);
    const pending = (await pay({ payment_information: card('4000000000003220') })).json;
    expect((await call('POST', `/payments/${pending.uuid}/refunds`, { token })).status).toBe(400);
  });

  it('never exceed the amount under 50 concurrent partial refunds', async () => {
    const payment = (await pay({ amount: { value: '1000', currency: 'CHF' } })).json;
    // Each caller sends again on a 409 (too many concurrent changes: the documented answer when its
    // step lost the race every time, which two loaded cores can make happen), as a client would.
    const refund = async () => {
      for (let attempt = 0; ; attempt++) {
        const answer = await call('POST', `/payments/${payment.uuid}/refunds`, {
          token,
          body: { amount: { value: '30', currency: 'CHF' } },
        });
        if (answer.status !== 409 || attempt >= 10) return answer;
      }
    };
    const results = await Promise.all(Array.from({ length: 50 }, refund));
    const succeeded = results.filter((r) => r.status === 200);
    expect(succeeded).toHaveLength(33);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 400)).toBe(true);
    const after = await call('GET', `/payments/${payment.uuid}`, { token });
    expect(after.json.refunded_amount.value).toBe('990');
    expect(after.json.refunds).toHaveLength(33);
  });

  it('replay with the same Idempotency-Key instead of refunding twice', async () => {
    const payment = (await pay({ amount: { value: '1000', currency: 'CHF' } })).json;
    const send = () =>
      call('POST', `/payments/${payment.uuid}/refunds`, {
        token,
        headers: { 'idempotency-key': `refund-${payment.uuid}` },
        body: { amount: { value: '100', currency: 'CHF' } },
      });
    const first = await send();
    const second = await send();
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json).toEqual(first.json);
    expect((await call('GET', `/payments/${payment.uuid}`, { token })).json.refunded_amount.value).toBe('100');
  });
});

describe('cancel and custom parameters', () => {
  it('cancel a pending payment, and refuse to cancel a settled one with 400', async () => {
    const pending = (await pay({ payment_method: 'twint', profile: 'twint', payment_information: undefined })).json;
    const cancelled = await call('POST', `/payments/${pending.uuid}/cancel`, {
      token,
      body: { reason: 'donor changed mind' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.status).toBe('cancelled');
    expect(cancelled.json.action).toBeUndefined();
    expect((await call('POST', `/payments/${pending.uuid}/cancel`, { token })).status).toBe(400);
    const settled = (await pay()).json;
    expect((await call('POST', `/payments/${settled.uuid}/cancel`, { token })).status).toBe(400);
  });

  it('replace with PUT and merge with PATCH', async () => {
    const payment = (await pay({ custom_parameters: { a: '1', b: { nested: true } } })).json;
    const patched = await call('PATCH', `/payments/${payment.uuid}/custom-parameters`, { token, body: { c: 3 } });
    expect(patched.json.custom_parameters).toEqual({ a: '1', b: { nested: true }, c: 3 });
    const replaced = await call('PUT', `/payments/${payment.uuid}/custom-parameters`, {
      token,
      body: { only: 'this' },
    });
    expect(replaced.json.custom_parameters).toEqual({ only: 'this' });
    expect((await call('PUT', `/payments/${payment.uuid}/custom-parameters`, { token, body: [1] })).status).toBe(400);
  });
});

describe('events', () => {
  it('travel on the table stream with each state change: succeeded, failed, cancelled, refund', async () => {
    const ok = (await pay()).json;
    const failed = (await pay({ payment_information: card('4000000000000002') })).json;
    const pending = (await pay({ payment_information: card('4000000000003220') })).json;
    await call('POST', `/payments/${pending.uuid}/cancel`, { token });
    const refund = (await call('POST', `/payments/${ok.uuid}/refunds`, { token })).json;
    await call('PATCH', `/payments/${ok.uuid}/custom-parameters`, { token, body: { no: 'event' } });
    const events = await streamEvents();
    const of = (uuid: string) => events.filter((e) => e.object_uuid === uuid).map((e) => [e.name, e.sequence]);
    expect(of(ok.uuid)).toEqual([['svc.payments.payment.succeeded', 1]]);
    expect(of(failed.uuid)).toEqual([['svc.payments.payment.failed', 1]]);
    expect(of(pending.uuid)).toEqual([['svc.payments.payment.cancelled', 1]]);
    expect(of(refund.uuid)).toEqual([['svc.payments.refund.succeeded', 1]]);
    const refundEvent = events.find((e) => e.object_uuid === refund.uuid);
    expect(refundEvent).toMatchObject({ organisation_uuid: DEMO.org, account_uuid: DEMO.secondAccount });
  });
});

describe('idempotent initialise', () => {
  it('replays the payment for the same key and body', async () => {
    const headers = { 'idempotency-key': 'pay-once-please' };
    const first = await pay({}, token, headers);
    const second = await pay({}, token, headers);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json.uuid).toBe(first.json.uuid);
    const reused = await pay({ amount: { value: '1', currency: 'CHF' } }, token, headers);
    expect(reused.status).toBe(422);
  });
});

describe('payment sources', () => {
  it('are created from a payment with create_payment_source and carry test_mode', async () => {
    const payment = (await pay({ create_payment_source: true, test_mode: true })).json;
    expect(payment.test_mode).toBe(true);
    const source = await call('GET', `/payment-sources/${payment.created_payment_source_uuid}`, { token });
    expect(source.json).toEqual({
      uuid: payment.created_payment_source_uuid,
      organisation_uuid: DEMO.org,
      account_uuid: DEMO.secondAccount,
      created: expect.any(Number),
      status: 'active',
      test_mode: true,
      payment_method: 'card',
      profile: 'card',
      provider: 'simulated',
      payment_information: payment.payment_information,
      custom_parameters: {},
    });
  });

  it('are created directly, verified for cards, and fail for declined cards', async () => {
    const create = (number: string) =>
      call('POST', '/payment-sources', {
        token,
        body: {
          account_uuid: DEMO.account,
          payment_method: 'card',
          profile: 'card-test',
          amount: { value: '100', currency: 'CHF' },
          payment_information: card(number),
        },
      });
    const active = await create('4000000000000341');
    expect(active.status).toBe(201);
    expect(active.json.status).toBe('active');
    const declined = await create('4000000000000002');
    expect(declined.json).toMatchObject({ status: 'failed', status_reason: 'card_declined' });
    const pending = await create('4000000000003220');
    expect(pending.json.status).toBe('pending');
    const url = new URL(pending.json.action.url);
    const page = await call('GET', `${url.pathname}${url.search}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Approve');
    await call('POST', url.pathname, { body: { token: url.searchParams.get('token'), decision: 'approve' } });
    expect((await call('GET', `/payment-sources/${pending.json.uuid}`, { token })).json.status).toBe('active');
    const replaced = await call('PUT', `/payment-sources/${active.json.uuid}/custom-parameters`, {
      token,
      body: { crm: 'x' },
    });
    expect(replaced.json.custom_parameters).toEqual({ crm: 'x' });
  });
});

describe('supporters from payments', () => {
  it('create the same Supporter record the supporters API serves', async () => {
    const payment = (
      await pay({
        create_supporter: true,
        supporter: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.org', email_permission: true },
      })
    ).json;
    expect(payment.supporter_uuid).toEqual(expect.any(String));
    const supporter = await call('GET', `/supporters/${payment.supporter_uuid}`, { token });
    expect(supporter.status).toBe(200);
    expect(supporter.json).toMatchObject({
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.org',
      organisation_uuid: DEMO.org,
    });
    const linked = (await pay({ supporter: { uuid: payment.supporter_uuid } })).json;
    expect(linked.supporter_uuid).toBe(payment.supporter_uuid);
    expect(linked.supporter).toMatchObject({ first_name: 'Grace', email: 'grace@example.org' });
    const foreign = await call('POST', '/supporters', {
      token: otherToken,
      body: { organisation_uuid: DEMO.otherOrg, first_name: 'Other' },
    });
    const wrongOrg = await pay({ supporter: { uuid: foreign.json.uuid } });
    expect(wrongOrg.status).toBe(400);
    expect(wrongOrg.json.error.message[0].property).toBe('supporter.uuid');
    const bad = await pay({ create_supporter: true, supporter: { email: 'not-an-email' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message[0].property).toBe('supporter.email');
  });
});

describe('grants', () => {
  it('answer 403 across tenants on every payment path', async () => {
    const payment = (await pay({ create_payment_source: true })).json;
    const checks: Array<Promise<ApiResponse>> = [
      pay({}, otherToken),
      call('GET', `/payments/${payment.uuid}`, { token: otherToken }),
      call('POST', `/payments/${payment.uuid}/cancel`, { token: otherToken }),
      call('POST', `/payments/${payment.uuid}/refunds`, { token: otherToken }),
      call('PUT', `/payments/${payment.uuid}/custom-parameters`, { token: otherToken, body: {} }),
      call('PATCH', `/payments/${payment.uuid}/custom-parameters`, { token: otherToken, body: {} }),
      call('GET', `/payment-sources/${payment.created_payment_source_uuid}`, { token: otherToken }),
      call('PUT', `/payment-sources/${payment.created_payment_source_uuid}/custom-parameters`, {
        token: otherToken,
        body: {},
      }),
      call('POST', '/payment-sources', {
        token: otherToken,
        body: {
          account_uuid: DEMO.account,
          payment_method: 'card',
          profile: 'card-test',
          amount: { value: '1', currency: 'CHF' },
          payment_information: card('4242424242424242'),
        },
      }),
    ];
    for (const response of await Promise.all(checks)) expect(response.status).toBe(403);
    expect((await call('GET', `/payments/${payment.uuid}`, { token })).json.refunds).toEqual([]);
  });

  it('keep search current between searches: new payments, changes, and a clock moved back', async () => {
    const byCampaign = (campaign: string) => ({ query: { $term: { 'custom_parameters.campaign': campaign } } });
    const first = (await pay({ custom_parameters: { campaign: 'live' } })).json;
    expect((await call('POST', '/search/payments', { token, body: byCampaign('live') })).json.summary.hits).toBe(1);
    const second = (await pay({ custom_parameters: { campaign: 'live' } })).json;
    await call('POST', `/payments/${first.uuid}/refunds`, {
      token,
      body: { amount: { value: '100', currency: 'CHF' } },
    });
    const after = await call('POST', '/search/payments', {
      token,
      body: {
        ...byCampaign('live'),
        sort: [{ field: 'refunded_amount.value', field_type: 'numeric', direction: 'desc' }],
      },
    });
    expect(after.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([first.uuid, second.uuid]);
    expect(after.json.hits[0].refunded_amount.value).toBe('100');
    freezeClock(1_000_000_000);
    const third = (await pay({ custom_parameters: { campaign: 'live' } })).json;
    expect(
      (await call('POST', '/search/payments', { token, body: byCampaign('live') })).json.hits.map(
        (h: { uuid: string }) => h.uuid,
      ),
    ).toContain(third.uuid);
  });

  it('scope search to what the grants cover, and find a payment as soon as it was created', async () => {
    const payment = (await pay({ custom_parameters: { campaign: 'search-me' } })).json;
    const query = { query: { $match: { 'custom_parameters.campaign': 'SEARCH-ME' } } };
    const mine = await call('POST', '/search/payments', { token, body: query });
    expect(mine.status).toBe(200);
    expect(mine.json.summary.hits).toBe(1);
    expect(mine.json.hits[0].uuid).toBe(payment.uuid);
    const theirs = await call('POST', '/search/payments', { token: otherToken, body: query });
    expect(theirs.json.summary.hits).toBe(0);
    const invalid = await call('POST', '/search/payments', { token, body: { query: { $nope: {} } } });
    expect(invalid.status).toBe(400);
  });
});
