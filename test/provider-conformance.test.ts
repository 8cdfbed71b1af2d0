import { freezeClock, newUuid } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, DEMO } from './support/api';
import {
  type Answer,
  api,
  eventsOf,
  getPayment,
  type ProviderUnderTest,
  pay,
  paymentOfAttempt,
  RETURN_URL,
  refund,
  resolveUntil,
  settle,
  settled,
  UNBOUND_VARIANTS,
  whenSupported,
} from './support/conformance';
import { adyenDriver } from './support/conformance-adyen';
import { simulatedDriver } from './support/conformance-simulated';
import { stripeDriver } from './support/conformance-stripe';

/**
 * Issue 45, point 12: one conformance kit for every provider. The behaviours every payment
 * provider adapter must show, asserted the same way for each (through the API, the table's
 * events, the service clock and the local background work), each provider brought under test by
 * its driver (test/support/conformance-*.ts, the interface in test/support/conformance.ts). A
 * capability a provider has no such thing for is declared unsupported by its driver, with the
 * reason, and recorded as a test of its own. A new PSP is added by passing its driver here.
 */
const DRIVERS: ProviderUnderTest[] = [stripeDriver(), adyenDriver(), simulatedDriver()];

beforeAll(() => {
  freezeClock(Math.floor(Date.now() / 1000));
});

const SUCCEEDED = 'svc.payments.payment.succeeded';
const FAILED = 'svc.payments.payment.failed';
const REFUNDED = 'svc.payments.refund.succeeded';

describe.each(DRIVERS)('$name', (driver) => {
  driver.setUp();
  beforeEach(async () => {
    await driver.reset();
  });

  /** Delivers the provider's callbacks, then all of them again (a provider's retry). */
  const callbacksTwice = async () => {
    await driver.deliverCallbacks();
    await driver.redeliverCallbacks();
  };
  const created = (response: { status: number; text: string; json: Answer }) => {
    expect(response.status, response.text).toBe(201);
    return response.json;
  };

  describe('create', () => {
    it('takes a card payment at once: succeeded, announced once, one payment however often the client retries', async () => {
      const key = newUuid();
      const paid = created(await pay(driver.card.charged, { 'idempotency-key': key }));
      expect(paid).toMatchObject({ status: 'succeeded', provider: driver.name, profile: driver.card.charged.profile });
      expect(paid.status_reason).toBeUndefined();
      expect(paid.action).toBeUndefined();
      expect(paid.payment_information.last4).toMatch(/^\d{4}$/);
      const again = await pay(driver.card.charged, { 'idempotency-key': key });
      expect(again.json.uuid, again.text).toBe(paid.uuid);
      await callbacksTwice();
      expect(await getPayment(paid.uuid)).toMatchObject({ status: 'succeeded', refunded_amount: { value: '0' } });
      expect(await eventsOf(paid.uuid)).toEqual([SUCCEEDED]);
    });
  });

  describe('decline', () => {
    it('fails a card the provider declines, with its reason, announced once; for lack of funds too', async () => {
      const declined = created(await pay(driver.card.declined));
      expect(declined).toMatchObject({ status: 'failed', status_reason: driver.card.declineReason });
      const poor = created(await pay(driver.card.insufficientFunds));
      expect(poor).toMatchObject({ status: 'failed', status_reason: 'insufficient_funds' });
      await callbacksTwice();
      for (const payment of [declined, poor]) {
        expect((await getPayment(payment.uuid)).status).toBe('failed');
        expect(await eventsOf(payment.uuid)).toEqual([FAILED]);
      }
    });
  });

  describe('unknown outcome', () => {
    it('keeps a payment the provider did not answer pending (provider_unavailable), never declined, and fails it once nothing of it can be found', async () => {
      await driver.unknownOutcome.arm();
      const unknown = created(await pay(driver.card.charged));
      await driver.unknownOutcome.disarm();
      expect(unknown).toMatchObject({
        status: 'pending',
        status_reason: 'provider_unavailable',
        provider: driver.name,
      });
      expect(unknown.action).toBeUndefined();
      await resolveUntil(driver, settled(unknown.uuid));
      expect(await getPayment(unknown.uuid)).toMatchObject({ status: 'failed', status_reason: 'provider_unavailable' });
      await callbacksTwice();
      expect(await eventsOf(unknown.uuid)).toEqual([FAILED]);
    });
  });

  describe('redirect and return', () => {
    describe.each(driver.redirects)('$name', (redirect) => {
      it('sends the donor to the provider and settles the payment they approved when they come back, once', async () => {
        const pending = created(await pay(redirect.fields));
        expect(pending).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
        expect(pending.action.url).toMatch(/^https?:\/\//);
        const back = await driver.completeRedirect(pending, true);
        expect(back.status, back.text).toBe(303);
        expect(back.headers.location).toBe(`${RETURN_URL}?payment_uuid=${pending.uuid}&status=succeeded`);
        const paid = await getPayment(pending.uuid);
        expect(paid.status).toBe('succeeded');
        expect(paid.action).toBeUndefined();
        // The donor reloads the page, and the provider's callbacks come, twice: nothing moves again.
        const reload = await driver.completeRedirect(pending, true);
        expect(reload.headers.location).toBe(back.headers.location);
        await callbacksTwice();
        expect(await eventsOf(pending.uuid)).toEqual([SUCCEEDED]);
      });

      it('fails the payment the donor refused on the provider’s page', async () => {
        const pending = created(await pay(redirect.fields));
        const back = await driver.completeRedirect(pending, false);
        expect(back.status, back.text).toBe(303);
        expect(back.headers.location).toBe(`${RETURN_URL}?payment_uuid=${pending.uuid}&status=failed`);
        expect(await getPayment(pending.uuid)).toMatchObject({
          status: 'failed',
          status_reason: redirect.refusalReason,
        });
        await callbacksTwice();
        expect(await eventsOf(pending.uuid)).toEqual([FAILED]);
      });
    });

    it('binds the donor’s return to its payment: another payment’s proof is refused and changes nothing', async () => {
      const mine = created(await pay(driver.redirects[0].fields));
      const theirs = created(await pay(driver.redirects[0].fields));
      const forged = await driver.returnWithProofOf(mine, theirs);
      expect(forged.status, forged.text).toBeGreaterThanOrEqual(400);
      expect(forged.status).toBeLessThan(500);
      for (const payment of [mine, theirs]) {
        expect(await getPayment(payment.uuid)).toMatchObject({
          status: 'pending',
          action: { action_type: 'redirect' },
        });
      }
      await driver.deliverCallbacks();
      expect(await getPayment(mine.uuid)).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
      // The donor's own return still settles their payment; the other's donor settles theirs,
      // by their return or (where the forged return spent their proof at the provider) its callback.
      expect((await driver.completeRedirect(mine, true)).status).toBe(303);
      expect((await getPayment(mine.uuid)).status).toBe('succeeded');
      await driver.completeRedirect(theirs, true);
      await callbacksTwice();
      expect((await getPayment(theirs.uuid)).status).toBe('succeeded');
      for (const payment of [mine, theirs]) expect(await eventsOf(payment.uuid)).toEqual([SUCCEEDED]);
    });

    it('cancels a payment waiting on the donor: cancelled, announced once', async () => {
      const pending = created(await pay(driver.redirects[0].fields));
      const cancelled = await api('POST', `/payments/${pending.uuid}/cancel`);
      expect(cancelled.status, cancelled.text).toBe(200);
      expect(cancelled.json.status).toBe('cancelled');
      await callbacksTwice();
      expect((await getPayment(pending.uuid)).status).toBe('cancelled');
      expect(await eventsOf(pending.uuid)).toEqual(['svc.payments.payment.cancelled']);
    });

    whenSupported(driver, 'an approval without the donor’s return', driver.approvalWithoutReturn, (approval) => {
      it(`settles a payment (${approval.redirect.name}) the donor approved at the provider but never came back from`, async () => {
        const pending = created(await pay(approval.redirect.fields));
        await approval.approve(pending);
        await resolveUntil(driver, settled(pending.uuid));
        expect(await getPayment(pending.uuid)).toMatchObject({ status: 'succeeded' });
        await callbacksTwice();
        expect(await eventsOf(pending.uuid)).toEqual([SUCCEEDED]);
      });
    });

    whenSupported(driver, 'the expiry of abandoned redirects', driver.abandonedRedirectsExpire, () => {
      it.each(driver.redirects.map((redirect) => [redirect.name, redirect] as const))(
        'fails a payment (%s) the donor abandoned on the provider’s page once their time is over (approval_expired)',
        async (_name, redirect) => {
          const pending = created(await pay(redirect.fields));
          await resolveUntil(driver, settled(pending.uuid));
          expect(await getPayment(pending.uuid)).toMatchObject({ status: 'failed', status_reason: 'approval_expired' });
          await callbacksTwice();
          expect(await eventsOf(pending.uuid)).toEqual([FAILED]);
        },
      );
    });
  });

  whenSupported(driver, 'asynchronous settlement', driver.asynchronousSettlement, (debits) => {
    describe('asynchronous settlement', () => {
      it('keeps a debit pending (processing) until the provider settles it, then succeeded, announced once', async () => {
        const debit = created(await pay(debits.fields));
        expect(debit).toMatchObject({ status: 'pending', status_reason: 'processing', provider: driver.name });
        expect(debit.action).toBeUndefined();
        await driver.deliverCallbacks();
        await settle();
        expect((await getPayment(debit.uuid)).status).toBe('pending');
        await debits.settle(debit, true);
        await callbacksTwice();
        const paid = await getPayment(debit.uuid);
        expect(paid.status).toBe('succeeded');
        expect(paid.status_reason).toBeUndefined();
        expect(await eventsOf(debit.uuid)).toEqual([SUCCEEDED]);
      });

      it('fails a debit the provider refuses, with its reason, announced once', async () => {
        const debit = created(await pay(debits.fields));
        await debits.settle(debit, false);
        await callbacksTwice();
        expect(await getPayment(debit.uuid)).toMatchObject({ status: 'failed', status_reason: debits.failureReason });
        expect(await eventsOf(debit.uuid)).toEqual([FAILED]);
      });

      whenSupported(driver, 'debit returns', debits.returnDebit, (returnDebit) => {
        it('records a debit the bank returned after it settled: still succeeded, a lost dispute, its funds withdrawn', async () => {
          const debit = created(await pay(debits.fields));
          await debits.settle(debit, true);
          await driver.deliverCallbacks();
          await returnDebit(debit);
          await callbacksTwice();
          expect(await getPayment(debit.uuid)).toMatchObject({
            status: 'succeeded',
            dispute: { status: 'lost', funds: 'withdrawn', amount: debit.amount },
          });
          expect(await eventsOf(debit.uuid)).toEqual([
            SUCCEEDED,
            'svc.payments.payment.disputed',
            'svc.payments.payment.dispute_closed',
            'svc.payments.payment.dispute_funds_withdrawn',
          ]);
        });
      });
    });
  });

  describe('refunds', () => {
    it('refunds part, then the rest, each announced once; more than is left is refused', async () => {
      const paid = created(await pay(driver.card.charged));
      await driver.deliverCallbacks();
      const part = await refund(paid, '1000');
      expect(part.status, part.text).toBe(200);
      expect(part.json.amount).toEqual({ value: '1000', currency: 'CHF' });
      expect(['pending', 'succeeded']).toContain(part.json.status);
      const over = await refund(paid, '1501');
      expect(over.status, over.text).toBe(400);
      expect(over.json.error.message[0].property).toBe('amount.value');
      const rest = await refund(paid);
      expect(rest.status, rest.text).toBe(200);
      expect(rest.json.amount).toEqual({ value: '1500', currency: 'CHF' });
      await callbacksTwice();
      const payment = await getPayment(paid.uuid);
      expect(payment.refunded_amount).toEqual({ value: '2500', currency: 'CHF' });
      expect(payment.refunds.map((r: Answer) => r.status)).toEqual(['succeeded', 'succeeded']);
      for (const made of [part.json, rest.json]) expect(await eventsOf(made.uuid)).toEqual([REFUNDED]);
      expect((await refund(paid, '1')).status).toBe(400);
    });

    whenSupported(driver, 'refunds made outside our API', driver.externalRefund, (refundElsewhere) => {
      it('records a refund made outside our API beside ours, once however often the provider reports it', async () => {
        const paid = created(await pay(driver.card.charged));
        const ours = await refund(paid, '300');
        expect(ours.status, ours.text).toBe(200);
        await driver.deliverCallbacks();
        await refundElsewhere(paid, 700);
        await callbacksTwice();
        const payment = await getPayment(paid.uuid);
        expect(payment.refunded_amount).toEqual({ value: '1000', currency: 'CHF' });
        expect(payment.refunds.map((r: Answer) => r.amount.value).sort()).toEqual(['300', '700']);
        expect(payment.refunds.map((r: Answer) => r.status)).toEqual(['succeeded', 'succeeded']);
        for (const made of payment.refunds) expect(await eventsOf(made.uuid)).toEqual([REFUNDED]);
        // Only what is left can be refunded through us now.
        expect((await refund(paid, '1501')).status).toBe(400);
        expect((await refund(paid)).json.amount.value).toBe('1500');
      });
    });

    whenSupported(driver, 'refunds that fail later', driver.failingRefund, (failing) => {
      it('fails a refund the provider fails later, announces it, and frees its amount', async () => {
        const paid = created(await pay(failing.charged));
        const made = await refund(paid, '700');
        expect(made.status, made.text).toBe(200);
        await failing.fail(paid, made.json);
        await callbacksTwice();
        const payment = await getPayment(paid.uuid);
        expect(payment.refunded_amount.value).toBe('0');
        expect(payment.refunds).toMatchObject([{ uuid: made.json.uuid, status: 'failed' }]);
        const events = await eventsOf(made.json.uuid);
        expect(events.at(-1)).toBe('svc.payments.refund.failed');
        expect(events.filter((name) => name === 'svc.payments.refund.failed')).toHaveLength(1);
        expect((await refund(paid)).json.amount.value).toBe('2500');
      });
    });
  });

  whenSupported(driver, 'disputes', driver.disputes, (disputes) => {
    describe('disputes', () => {
      it('records a dispute with its funds withdrawn, and its win with the funds back, each announced once', async () => {
        const paid = created(await pay(driver.card.charged));
        await driver.deliverCallbacks();
        await disputes.open(paid);
        await callbacksTwice();
        const disputed = await getPayment(paid.uuid);
        expect(disputed).toMatchObject({ status: 'succeeded', dispute: { funds: 'withdrawn', amount: paid.amount } });
        expect(['won', 'lost']).not.toContain(disputed.dispute.status);
        expect(await eventsOf(paid.uuid)).toEqual([
          SUCCEEDED,
          'svc.payments.payment.disputed',
          'svc.payments.payment.dispute_funds_withdrawn',
        ]);
        await disputes.win(paid);
        await callbacksTwice();
        expect((await getPayment(paid.uuid)).dispute).toMatchObject({
          status: 'won',
          funds: 'reinstated',
          amount: paid.amount,
        });
        const after = (await eventsOf(paid.uuid)).slice(3);
        expect(after.sort()).toEqual([
          'svc.payments.payment.dispute_closed',
          'svc.payments.payment.dispute_funds_reinstated',
        ]);
      });
    });
  });

  describe('saved instruments and off-session charges', () => {
    it('saves a card without the donor’s payment and charges it off-session in a billing run: the invoice paid, announced once', async () => {
      const source = await api('POST', '/payment-sources', {
        account_uuid: DEMO.secondAccount,
        amount: { value: '100', currency: 'CHF' },
        test_mode: true,
        return_url: RETURN_URL,
        ...driver.savedCard,
      });
      expect(source.status, source.text).toBe(201);
      expect(source.json).toMatchObject({ status: 'active', provider: driver.name, payment_method: 'card' });
      const supporter = await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
      const subscription = await api('POST', '/subscriptions', {
        account_uuid: DEMO.secondAccount,
        payment_source_uuid: source.json.uuid,
        supporter_uuid: supporter.json.uuid,
        currency: 'CHF',
        amount: 1800,
        recurring_interval: 'monthly',
        status: 'active',
        test_mode: true,
      });
      expect(subscription.status, subscription.text).toBe(201);
      const run = await call('POST', '/_local/billing-run');
      expect(run.status, run.text).toBe(200);
      await callbacksTwice();
      const [invoice] = (await api('GET', `/subscriptions/${subscription.json.uuid}/invoices`)).json;
      expect(invoice).toMatchObject({ status: 'paid', charge_attempts: [{ status: 'succeeded' }] });
      const charge = await getPayment(paymentOfAttempt(invoice.charge_attempts[0].uuid));
      expect(charge).toMatchObject({ status: 'succeeded', provider: driver.name, amount: { value: '1800' } });
      expect(await eventsOf(charge.uuid)).toEqual([SUCCEEDED]);
      expect((await eventsOf(invoice.uuid)).filter((name) => name === 'svc.subscriptions.invoice.paid')).toHaveLength(
        1,
      );
    });

    it('saves the card of a payment that asks for it, and does not save one the provider declines', async () => {
      const paid = created(await pay({ ...driver.card.charged, create_payment_source: true }));
      expect(paid).toMatchObject({ status: 'succeeded', created_payment_source_uuid: expect.any(String) });
      const source = await api('GET', `/payment-sources/${paid.created_payment_source_uuid}`);
      expect(source.json).toMatchObject({ status: 'active', provider: driver.name, payment_method: 'card' });
      const declined = await api('POST', '/payment-sources', {
        account_uuid: DEMO.secondAccount,
        amount: { value: '100', currency: 'CHF' },
        test_mode: true,
        return_url: RETURN_URL,
        ...driver.card.declined,
      });
      expect(declined.status, declined.text).toBe(201);
      expect(declined.json).toMatchObject({ status: 'failed', status_reason: driver.card.declineReason });
    });
  });

  whenSupported(driver, 'callbacks (other than the donor’s return)', driver.unboundCallbacks, (sendUnbound) => {
    describe('callbacks bound to their owner', () => {
      it('changes nothing on a callback from another account, the other mode or another reference; the payment’s own applies', async () => {
        const paid = created(await pay(driver.card.charged));
        const pending = created(await pay(driver.redirects[0].fields));
        await driver.deliverCallbacks();
        for (const variant of UNBOUND_VARIANTS) {
          for (const response of [
            ...(await sendUnbound(variant, 'settlement', pending)),
            ...(await sendUnbound(variant, 'refund', paid)),
            ...(await sendUnbound(variant, 'dispute', paid)),
          ]) {
            // Acknowledged, so the provider does not send it again, and applied to nothing.
            expect(response.status, `${variant}: ${response.text}`).toBe(200);
          }
        }
        await driver.deliverCallbacks();
        expect(await getPayment(pending.uuid)).toMatchObject({
          status: 'pending',
          action: { action_type: 'redirect' },
        });
        const untouched = await getPayment(paid.uuid);
        expect(untouched).toMatchObject({ status: 'succeeded', refunds: [], refunded_amount: { value: '0' } });
        expect(untouched.dispute).toBeUndefined();
        expect(await eventsOf(paid.uuid)).toEqual([SUCCEEDED]);
        expect(await eventsOf(pending.uuid)).toEqual([]);
        // The payment's own settlement applies: the check binds, it does not block.
        expect((await driver.completeRedirect(pending, true)).status).toBe(303);
        await callbacksTwice();
        expect((await getPayment(pending.uuid)).status).toBe('succeeded');
      });
    });
  });

  whenSupported(driver, 'lost answers', driver.lostAnswer, (lost) => {
    describe('lost answers', () => {
      it('keeps a payment the provider made but never answered pending, and records it once found: one charge, its card saved', async () => {
        await lost.loseNextAnswer();
        const unknown = created(await pay({ ...driver.card.charged, create_payment_source: true }));
        expect(unknown).toMatchObject({
          status: 'pending',
          status_reason: 'provider_unavailable',
          provider: driver.name,
        });
        expect(unknown.action).toBeUndefined();
        expect(lost.paymentsAt(unknown.uuid)).toEqual(['charged']);
        await settle();
        expect((await getPayment(unknown.uuid)).status).toBe('pending');
        await resolveUntil(driver, settled(unknown.uuid));
        const paid = await getPayment(unknown.uuid);
        expect(paid.status).toBe('succeeded');
        expect(paid.status_reason).toBeUndefined();
        expect(paid.created_payment_source_uuid).toEqual(expect.any(String));
        expect(lost.paymentsAt(unknown.uuid)).toEqual(['charged']);
        const source = await api('GET', `/payment-sources/${paid.created_payment_source_uuid}`);
        expect(source.json).toMatchObject({ status: 'active', provider: driver.name });
        await callbacksTwice();
        expect(await eventsOf(unknown.uuid)).toEqual([SUCCEEDED]);
      });

      it('records a refund the provider made but never answered, once', async () => {
        const paid = created(await pay(driver.card.charged));
        await driver.deliverCallbacks();
        await lost.loseNextAnswer();
        const made = await refund(paid, '900');
        expect(made.status, made.text).toBe(200);
        const refunded = async () => (await getPayment(paid.uuid)).refunds[0]?.status !== 'pending';
        await resolveUntil(driver, refunded);
        const payment = await getPayment(paid.uuid);
        expect(payment.refunded_amount.value).toBe('900');
        expect(payment.refunds).toMatchObject([{ uuid: made.json.uuid, status: 'succeeded' }]);
        expect(lost.refundsAt(paid)).toBe(1);
        await callbacksTwice();
        expect(await eventsOf(made.json.uuid)).toEqual([REFUNDED]);
      });
    });
  });
});
