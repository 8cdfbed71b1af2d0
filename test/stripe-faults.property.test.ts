import { advanceClock, freezeClock } from '@svc/core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DONOR_MANDATE, stripeCalls, useStripe } from './support/stripe-harness';
import type { Fault, RecordedRequest, StripeStandIn } from './support/stripe-stand-in';

/**
 * Crashes and faults against the strict Stripe stand-in: random 500s (before and after Stripe did
 * the work, kept under the key), lost answers and refused connections on the creation of
 * payments, sources and refunds, the donor's decisions, debits settling, and Stripe's events
 * delivered in any order, any number of times. Whatever happens, once the background work has
 * run: one charge at most per payment, every payment in the state Stripe has it, every refund
 * made once and recorded as Stripe has it, and nothing charged to save a source.
 */
const harness = useStripe();
const { api, pay, intentOf, deliver, saveCard, getPayment, settle } = stripeCalls(harness);
let stripe: StripeStandIn;
beforeAll(() => {
  ({ stripe } = harness);
});

type Kind = 'card' | 'card_3ds' | 'sepa';
const FAULTS: Array<Fault | 'none'> = ['none', 'server_error', 'server_error_after_work', 'drop', 'refuse'];

const scenario = fc.record({
  payments: fc.array(
    fc.record({
      kind: fc.constantFrom<Kind>('card', 'card_3ds', 'sepa'),
      createFault: fc.constantFrom(...FAULTS),
      /** The donor approves 3-D Secure / the bank pays the debit. */
      approved: fc.boolean(),
      refund: fc.option(fc.record({ minor: fc.integer({ min: 1, max: 2500 }), fault: fc.constantFrom(...FAULTS) }), {
        nil: undefined,
      }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  sourceFault: fc.constantFrom(...FAULTS),
  /** Stripe's events: delivered in this order (indices into what was recorded), repeats allowed. */
  deliveries: fc.array(fc.nat(), { maxLength: 8 }),
});

/** A fault on the next request to `path` (every SDK re-send of it too, for lost answers and refusals). */
function inject(fault: Fault | 'none', matches: (r: RecordedRequest) => boolean): void {
  if (fault === 'none') return;
  // The SDK re-sends a closed connection once even without retries: both meet the fault.
  stripe.failNextMatching(matches, fault, fault === 'drop' || fault === 'refuse' ? 2 : 1);
}

const creating = (path: string) => (r: RecordedRequest) => r.method === 'POST' && r.path === path;

describe('Stripe under faults (property)', () => {
  it('ends with one charge per paid payment, no verification money, every payment and refund as Stripe has it', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ payments, sourceFault, deliveries }) => {
        freezeClock(Math.floor(Date.now() / 1000));
        const made: Array<{ uuid: string; refund?: string }> = [];
        for (const plan of payments) {
          inject(plan.createFault, creating('/v1/payment_intents'));
          const response =
            plan.kind === 'sepa'
              ? await pay({
                  payment_method: 'sepa_dd',
                  profile: 'sepa-stripe',
                  amount: { value: '2500', currency: 'EUR' },
                  payment_information: { ...DONOR_MANDATE, iban: 'DE89370400440532013000', account_holder: 'Ada' },
                })
              : await pay({
                  payment_information: {
                    payment_method: plan.kind === 'card' ? 'pm_card_visa' : 'pm_card_threeDSecure2Required',
                  },
                });
          expect(response.status, response.text).toBe(201);
          made.push({ uuid: response.json.uuid });
          const intent = intentOf(response.json);
          if (intent?.status === 'requires_action' && plan.approved) stripe.decide(String(intent.id), true);
          if (intent?.status === 'processing') stripe.settle(String(intent.id), plan.approved);
        }
        inject(sourceFault, creating('/v1/setup_intents'));
        const source = await saveCard('pm_card_visa');
        expect([201, 500]).toContain(source.status);

        // Events in random order and number, as Stripe's retries and our outages make them.
        const recorded = [...stripe.events];
        for (const index of deliveries) {
          const event = recorded[index % Math.max(1, recorded.length)];
          if (!event) continue;
          const data = event.data as { object: Record<string, unknown> };
          expect((await deliver(String(event.type), data.object)).status).toBe(200);
        }
        // Refunds of what succeeded so far, under faults.
        for (const [i, plan] of payments.entries()) {
          const entry = made[i];
          if (!plan.refund || !entry) continue;
          const current = await getPayment(entry.uuid);
          if (current.status !== 'succeeded') continue;
          inject(plan.refund.fault, creating('/v1/refunds'));
          const refund = await api('POST', `/payments/${entry.uuid}/refunds`, {
            amount: { value: String(plan.refund.minor), currency: current.amount.currency },
          });
          expect(refund.status, refund.text).toBe(200);
          entry.refund = refund.json.uuid;
        }
        // The background work: a minute, a quarter of an hour, an hour, a day, two days on.
        for (const seconds of [61, 15 * 60, 3600, 86_400, 86_400]) {
          advanceClock(seconds);
          await settle();
        }

        for (const entry of made) {
          const payment = await getPayment(entry.uuid);
          const intents = stripe
            .charges()
            .filter((i) => (i.metadata as Record<string, string>).svc_reference === entry.uuid);
          // Never a second charge.
          expect(intents.length).toBeLessThanOrEqual(1);
          const truth = intents[0] ? String(stripe.intents.get(String(intents[0].id))?.status) : 'none';
          // Every payment in the state Stripe has it.
          const expected: Record<string, string> = {
            succeeded: 'succeeded',
            none: 'failed',
            requires_payment_method: 'failed',
            canceled: 'failed',
            processing: 'pending',
          };
          expect(payment.status, `${entry.uuid}: Stripe has ${truth}`).toBe(expected[truth]);
          if (!entry.refund) continue;
          const refunds = [...stripe.refunds.values()].filter(
            (r) => (r.metadata as Record<string, string>)?.svc_reference === entry.refund,
          );
          // Every refund made once, and recorded as Stripe has it.
          expect(refunds.length).toBeLessThanOrEqual(1);
          const ours = payment.refunds.find((r: { uuid: string }) => r.uuid === entry.refund);
          expect(ours.status).toBe(refunds[0] ? refunds[0].status : 'failed');
        }
        // Nothing charged to save a source.
        if (source.status === 201) {
          expect(
            stripe.charges().filter((i) => (i.metadata as Record<string, string>).svc_reference === source.json.uuid),
          ).toEqual([]);
        }
      }),
      { numRuns: 12 },
    );
    // Twelve scenarios of up to three payments and five background passes each: about 30 s on an
    // idle 2-core machine, more beside the rest of the suite.
  }, 240_000);
});
