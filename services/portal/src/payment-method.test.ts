import { advanceClock, ConflictError, TooManyRequestsError, ValidationError } from '@svc/core';
import { findSubscription } from '@svc/subscriptions';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../../test/support/api';
import {
  billingRun,
  DEMO,
  subscription as newSubscription,
  ok,
  setClock,
  setup,
} from '../../subscriptions/src/test-support';
import { donorPayments } from './domain/manage';
import { CODE_MAX_ATTEMPTS, changePaymentMethod, sendCode, settlePendingMethod } from './domain/payment-method';
import { PORTAL_SETTINGS_ON } from './testing-portal';

/**
 * Changing the payment method in the portal (issue 47 point 2): a one-time code mailed first,
 * each guess counted before it is compared, the new source made as the API makes one, and the
 * old source kept until the new one is active.
 */
const SETTINGS = PORTAL_SETTINGS_ON;
const BASE = 'https://svc.example.org';
const RETURN = `${BASE}/portal/home`;
const NEW_CARD = { number: '5555555555554444', expiry_month: 11, expiry_year: 2099, cvv: '321' };

let n = 0;

beforeAll(async () => {
  await setup();
  await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, SETTINGS);
  // Starts the stand-ins (queues, SES) the codes' mails go through.
  expect((await call('POST', '/_local/settle')).status).toBe(200);
});

async function donorWithSubscription() {
  const email = `donor-${Date.now()}-${n++}@example.org`;
  const supporter = await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email }, 201);
  const created = await newSubscription({ supporter_uuid: supporter.uuid });
  await billingRun();
  return {
    donor: { organisation_uuid: DEMO.org, supporter_uuid: supporter.uuid as string },
    uuid: created.uuid as string,
    source: created.payment_source_uuid as string,
    email,
  };
}

/** The code in the newest mail to the address (the local SES keeps what it accepted). */
async function mailedCode(email: string): Promise<string> {
  expect((await call('POST', '/_local/settle')).status).toBe(200);
  const listed = await call('GET', `/_local/mail?to=${encodeURIComponent(email)}`);
  const newest = (listed.json as Array<{ subject: string; text: string }>)[0];
  const code = /\b(\d{6})\b/.exec(newest?.text ?? '')?.[1];
  if (!code) throw new Error(`No code mailed to ${email}: ${listed.text}`);
  return code;
}

const card = (code: string, number = NEW_CARD.number) => ({
  code,
  payment_method: 'card',
  payment_information: { ...NEW_CARD, number },
});

describe('the payment method, changed by the donor', () => {
  it('needs the mailed code; the new card is used from the next charge, the old source kept', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid, source, email } = await donorWithSubscription();
    await sendCode(donor, 'de');
    const code = await mailedCode(email);
    const changed = await changePaymentMethod(donor, uuid, card(code), BASE, RETURN);
    expect(changed.status).toBe('active');
    expect(changed.subscription.payment_source_uuid).not.toBe(source);
    expect((await ok('GET', `/payment-sources/${source}`)).status).toBe('active');
    const stored = await findSubscription(uuid);
    expect(stored?.events.map((e) => [e.name, e.changed_by])).toEqual([
      ['svc.subscriptions.subscription.updated', { actor: 'supporter', channel: 'portal' }],
    ]);
    // Used once.
    await expect(changePaymentMethod(donor, uuid, card(code), BASE, RETURN)).rejects.toBeInstanceOf(ValidationError);
    // The next charge is taken from the new card.
    setClock('2031-04-10T12:00:00');
    await billingRun();
    const gifts = await donorPayments(donor, 2031);
    expect(gifts.payments.map((p) => p.charged_payment_source_uuid)).toEqual([
      changed.subscription.payment_source_uuid,
      source,
    ]);
  });

  it('mails at most one code a minute, and a new code replaces the one before', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid, email } = await donorWithSubscription();
    await sendCode(donor, 'en');
    const first = await mailedCode(email);
    await expect(sendCode(donor, 'en')).rejects.toBeInstanceOf(TooManyRequestsError);
    advanceClock(61);
    await sendCode(donor, 'en');
    const second = await mailedCode(email);
    if (first !== second) {
      await expect(changePaymentMethod(donor, uuid, card(first), BASE, RETURN)).rejects.toBeInstanceOf(ValidationError);
    }
    expect((await changePaymentMethod(donor, uuid, card(second), BASE, RETURN)).status).toBe('active');
  });

  it('counts every guess before comparing it: parallel wrong guesses past the bound leave the right code refused', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid, email } = await donorWithSubscription();
    await sendCode(donor, 'en');
    const code = await mailedCode(email);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const guesses = await Promise.allSettled(
      Array.from({ length: CODE_MAX_ATTEMPTS + 5 }, () => changePaymentMethod(donor, uuid, card(wrong), BASE, RETURN)),
    );
    expect(guesses.every((g) => g.status === 'rejected' && g.reason instanceof ValidationError)).toBe(true);
    await expect(changePaymentMethod(donor, uuid, card(code), BASE, RETURN)).rejects.toBeInstanceOf(ValidationError);
  });

  it('bad input is refused before a guess is spent; an expired code is refused', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid, email } = await donorWithSubscription();
    await sendCode(donor, 'en');
    const code = await mailedCode(email);
    for (let i = 0; i < CODE_MAX_ATTEMPTS + 1; i++) {
      await expect(
        changePaymentMethod(donor, uuid, { ...card(code), payment_method: 'carrier_pigeon' }, BASE, RETURN),
      ).rejects.toBeInstanceOf(Error);
    }
    expect((await changePaymentMethod(donor, uuid, card(code), BASE, RETURN)).status).toBe('active');
    advanceClock(61);
    await sendCode(donor, 'en');
    const late = await mailedCode(email);
    advanceClock(11 * 60);
    await expect(changePaymentMethod(donor, uuid, card(late), BASE, RETURN)).rejects.toBeInstanceOf(ValidationError);
  });

  it('a card that needs 3-D Secure stays pending with its redirect; the old source is charged until it is approved', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid, source, email } = await donorWithSubscription();
    await sendCode(donor, 'en');
    const code = await mailedCode(email);
    const pending = await changePaymentMethod(donor, uuid, card(code, '4000000000003220'), BASE, RETURN);
    expect(pending.status).toBe('pending');
    expect(pending.redirect_url).toMatch(/^https?:\/\//);
    expect(pending.subscription.payment_source_uuid).toBe(source);
    const stored = await findSubscription(uuid);
    expect(stored?.pending_source_uuid).toBeDefined();
    // The donor approves at the provider's page, comes back: the new source is used.
    const page = new URL(pending.redirect_url ?? '');
    const approved = await call('POST', page.pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: `decision=approve&token=${page.searchParams.get('token')}`,
    });
    expect(approved.status).toBeLessThan(400);
    const settled = await settlePendingMethod(donor, uuid);
    expect(settled.payment_source_uuid).toBe(stored?.pending_source_uuid);
    expect((await findSubscription(uuid))?.pending_source_uuid).toBeUndefined();
  });

  it('a new SEPA mandate replaces a card (the account’s sepa_dd profile): debited from the next charge', async () => {
    setClock('2031-03-10T09:00:00');
    const email = `donor-sepa-${Date.now()}@example.org`;
    const supporter = await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email }, 201);
    const card = await ok(
      'POST',
      '/payment-sources',
      {
        account_uuid: DEMO.secondAccount,
        payment_method: 'card',
        profile: 'card',
        amount: { value: '100', currency: 'CHF' },
        payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      },
      201,
    );
    const created = await newSubscription({
      account_uuid: DEMO.secondAccount,
      payment_source_uuid: card.uuid,
      supporter_uuid: supporter.uuid,
    });
    await billingRun();
    const donor = { organisation_uuid: DEMO.org, supporter_uuid: supporter.uuid as string };
    await sendCode(donor, 'de');
    const code = await mailedCode(email);
    const changed = await changePaymentMethod(
      donor,
      created.uuid,
      {
        code,
        payment_method: 'sepa_dd',
        profile: 'sepa_dd',
        payment_information: { iban: 'CH93 0076 2011 6238 5295 7', account_holder: 'Ada Donor' },
      },
      BASE,
      RETURN,
    );
    expect(changed.status).toBe('active');
    expect(changed.subscription).toMatchObject({ payment_method: 'sepa_dd' });
    const mandate = await ok('GET', `/payment-sources/${changed.subscription.payment_source_uuid}`);
    expect(mandate).toMatchObject({ status: 'active', payment_method: 'sepa_dd', profile: 'sepa_dd' });
    expect((await ok('GET', `/payment-sources/${card.uuid}`)).status).toBe('active');
  });

  it('is refused where the organisation does not allow it', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor } = await donorWithSubscription();
    await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, {
      ...SETTINGS,
      features: { ...SETTINGS.features, payment_method: false },
    });
    try {
      await expect(sendCode(donor, 'en')).rejects.toBeInstanceOf(ConflictError);
    } finally {
      await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, SETTINGS);
    }
  });
});
