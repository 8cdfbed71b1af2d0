import { DEFAULT_PAYMENT_METHOD_PROFILES, paymentMethodProfileSchema, upsertOrganisation } from '@svc/organisations';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../../test/support/api';
import { subscriptionEventData } from './event-data';
import { findInvoice, INVOICE } from './repository/subscription-repository';
import { api, billingRun, DEMO, ok, setClock, supporter } from './test-support';

/**
 * Subscriptions whose donor covers the fees (contract section 13, issue 48 point 1): kept per
 * subscription, set on create, by PATCH and by the payment that starts one, and charged on every
 * recurring charge as the total covering the fees of the source's profile as they are then.
 */
const FEES = { percent: '2.9', fixed: '30' };

/** The demo's main account with a profile that has fees beside its own (which has none). */
async function useFees(fees: { percent: string; fixed: string }): Promise<void> {
  const seed = await seedDemo();
  for (const organisation of seed.organisations) {
    const account = organisation.accounts.find((candidate) => candidate.uuid === DEMO.account);
    if (!account) continue;
    account.payment_method_profiles = [
      { name: 'card-test', payment_method: 'card', provider: 'simulated' },
      { name: 'card-fees', payment_method: 'card', provider: 'simulated', fees },
      ...DEFAULT_PAYMENT_METHOD_PROFILES.filter((profile) => profile.payment_method !== 'card'),
    ].map((profile) => paymentMethodProfileSchema.parse(profile));
    await upsertOrganisation(organisation);
  }
}

beforeAll(async () => {
  await useFees(FEES);
});

const CARD = { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' };

async function sourceOn(profile: string): Promise<string> {
  const source = await ok(
    'POST',
    '/payment-sources',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile,
      amount: { value: '100', currency: 'CHF' },
      payment_information: CARD,
    },
    201,
  );
  return source.uuid as string;
}

async function covered(fields: Record<string, unknown> = {}) {
  return ok(
    'POST',
    '/subscriptions',
    {
      account_uuid: DEMO.account,
      payment_source_uuid: await sourceOn('card-fees'),
      supporter_uuid: await supporter(),
      currency: 'CHF',
      amount: 2500,
      recurring_interval: 'monthly',
      status: 'active',
      cover_fees: true,
      ...fields,
    },
    201,
  );
}

async function latestInvoice(uuid: string) {
  const invoices = (await ok('GET', `/subscriptions/${uuid}/invoices`)) as Array<{
    uuid: string;
    created: number;
    amount: number;
    intended_amount: number;
    fee_cover_amount: number;
    status: string;
  }>;
  const [latest] = [...invoices].sort((a, b) => b.created - a.created);
  if (!latest) throw new Error('The subscription has an invoice');
  return latest;
}

async function chargedPayment(subscriptionUuid: string, invoiceUuid: string) {
  const invoice = await findInvoice(subscriptionUuid, invoiceUuid);
  const attempt = invoice?.charge_attempts.at(-1);
  if (!attempt) throw new Error('The invoice has an attempt');
  return ok('GET', `/payments/${attempt.payment_uuid}`);
}

describe('a subscription whose donor covers the fees', () => {
  it('charges every recurring charge the total that leaves the amount, shown on the invoice, its payment and its event', async () => {
    setClock('2028-03-01T08:00');
    const created = await covered();
    expect(created).toMatchObject({ amount: 2500, cover_fees: true });
    expect(await billingRun()).toMatchObject({ invoices_created: 1, succeeded: 1 });
    const invoice = await latestInvoice(created.uuid);
    expect(invoice).toMatchObject({ status: 'paid', amount: 2606, intended_amount: 2500, fee_cover_amount: 106 });
    const payment = await chargedPayment(created.uuid, invoice.uuid);
    expect(payment).toMatchObject({
      status: 'succeeded',
      amount: { value: '2606', currency: 'CHF' },
      intended_amount: { value: '2500', currency: 'CHF' },
      fee_cover_amount: { value: '106', currency: 'CHF' },
      subscription_uuid: created.uuid,
    });
    const record = await findInvoice(created.uuid, invoice.uuid);
    const [event] = record?.events ?? [];
    if (!record || !event) throw new Error('The paid invoice carries its event');
    expect(await subscriptionEventData.invoice?.build(event, INVOICE.item(record))).toMatchObject({
      amount: 2606,
      intended_amount: 2500,
      fee_cover_amount: 106,
    });

    // A month on, the next charge is covered too.
    setClock('2028-04-01T08:00');
    await billingRun();
    expect(await latestInvoice(created.uuid)).toMatchObject({ amount: 2606, intended_amount: 2500 });
  });

  it('is kept per subscription: turned off by PATCH, the next charge is the amount; on again, covered', async () => {
    setClock('2028-05-01T08:00');
    const created = await covered();
    await billingRun();
    const off = await ok('PATCH', `/subscriptions/${created.uuid}`, { cover_fees: false });
    expect(off).toMatchObject({ cover_fees: false, amount: 2500 });
    setClock('2028-06-01T08:00');
    await billingRun();
    expect(await latestInvoice(created.uuid)).toMatchObject({
      amount: 2500,
      intended_amount: 2500,
      fee_cover_amount: 0,
    });
    const on = await ok('PATCH', `/subscriptions/${created.uuid}`, { cover_fees: true, amount: 5000 });
    expect(on).toMatchObject({ cover_fees: true, amount: 5000 });
    setClock('2028-07-01T08:00');
    await billingRun();
    // ceil(5030 / 0.971) = 5181.
    expect(await latestInvoice(created.uuid)).toMatchObject({ amount: 5181, intended_amount: 5000 });
  });

  it('is refused with 400 on cover_fees where the payment method’s profile has no fees (create and PATCH)', async () => {
    setClock('2028-05-01T08:00');
    const refused = await api('POST', '/subscriptions', {
      account_uuid: DEMO.account,
      payment_source_uuid: await sourceOn('card-test'),
      supporter_uuid: await supporter(),
      currency: 'CHF',
      amount: 2500,
      recurring_interval: 'monthly',
      cover_fees: true,
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].property).toBe('cover_fees');
    const plain = await ok(
      'POST',
      '/subscriptions',
      {
        account_uuid: DEMO.account,
        payment_source_uuid: await sourceOn('card-test'),
        supporter_uuid: await supporter(),
        currency: 'CHF',
        amount: 2500,
        recurring_interval: 'monthly',
      },
      201,
    );
    expect(plain.cover_fees).toBe(false);
    const patched = await api('PATCH', `/subscriptions/${plain.uuid}`, { cover_fees: true });
    expect(patched.status).toBe(400);
    expect(patched.json.error.message[0].property).toBe('cover_fees');
  });

  it('is started by a payment that covered the fees: the subscription keeps the amount and covers each charge', async () => {
    setClock('2028-08-01T08:00');
    const paid = await ok(
      'POST',
      '/payments',
      {
        account_uuid: DEMO.account,
        payment_method: 'card',
        profile: 'card-fees',
        amount: { value: '2500', currency: 'CHF' },
        payment_information: CARD,
        create_payment_source: true,
        cover_fees: true,
        subscription: { recurring_interval: 'monthly' },
      },
      201,
    );
    expect(paid).toMatchObject({ amount: { value: '2606', currency: 'CHF' }, fee_cover_amount: { value: '106' } });
    const started = await ok('GET', `/subscriptions/${paid.subscription_uuid}`);
    expect(started).toMatchObject({ amount: 2500, cover_fees: true });
    setClock('2028-09-01T08:00');
    await billingRun();
    expect(await latestInvoice(paid.subscription_uuid)).toMatchObject({ amount: 2606, intended_amount: 2500 });
  });

  it('charges the fees of the profile as they are at each charge, and shows the total on a manual invoice', async () => {
    setClock('2028-10-01T08:00');
    const created = await covered();
    await billingRun();
    await useFees({ percent: '1.4', fixed: '25' });
    try {
      const manual = await ok('POST', `/subscriptions/${created.uuid}/invoices`, { amount: 1000 }, 201);
      // ceil(1025 / 0.986) = 1040.
      expect(manual).toMatchObject({ amount: 1040, intended_amount: 1000, fee_cover_amount: 40 });
      setClock('2028-11-01T08:00');
      await billingRun();
      // ceil(2525 / 0.986) = 2561.
      const invoices = (await ok('GET', `/subscriptions/${created.uuid}/invoices`)) as Array<{
        is_manually_created: boolean;
        amount: number;
        intended_amount: number;
      }>;
      expect(invoices.find((invoice) => !invoice.is_manually_created && invoice.amount !== 2606)).toMatchObject({
        amount: 2561,
        intended_amount: 2500,
      });
    } finally {
      await useFees(FEES);
    }
  });

  it('announces the covered total in the charge reminder', async () => {
    setClock('2029-01-10T09:00');
    await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, {
      enabled: false,
      features: {
        amount: true,
        interval: true,
        next_date: true,
        skip: true,
        pause: true,
        payment_method: true,
        cancel: true,
      },
      min_amount: null,
      max_amount: null,
      intervals: ['monthly', 'yearly'],
      cancel_reasons: ['other'],
      retention_offer: null,
      brand: { name: 'Stiftung Sonnenschein', color: '#0a7d3b' },
      return_url: null,
    });
    const email = `fees-${Date.now()}@example.org`;
    const donor = await ok(
      'POST',
      '/supporters',
      { organisation_uuid: DEMO.org, first_name: 'Ada', locale: 'en', email },
      201,
    );
    await covered({ supporter_uuid: donor.uuid, recurring_interval: 'yearly', planned_effective_from: '2029-03-15' });
    setClock('2029-03-08T09:00');
    await billingRun();
    await ok('POST', '/_local/settle');
    const mails = (await ok('GET', `/_local/mail?to=${encodeURIComponent(email)}`)) as Array<{ text: string }>;
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain('26.06');
    expect(mails[0]?.text).not.toContain('25.00');
  });
});
