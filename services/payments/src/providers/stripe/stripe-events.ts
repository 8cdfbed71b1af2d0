import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { derivedUuid, logger, now, ValidationError } from '@svc/core';
import { db, getItem, key, TTL_ATTRIBUTE, tableName } from '@svc/table';
import type Stripe from 'stripe';
import { storedContext } from '../../domain/context';
import {
  failRefund,
  recordDispute,
  recordProviderRefunds,
  settleFromProvider,
  settleRecurringFromProvider,
} from '../../domain/provider-updates';
import { findPayment, type PaymentRecord } from '../../repository/payment-repository';
import { stripeClient, stripeKeys, stripeWebhooks } from './stripe-config';
import { stripeProvider } from './stripe-provider';

/**
 * Stripe's event deliveries (`POST /providers/stripe/events`): verified with the SDK's signature
 * check on the raw body (5-minute tolerance, judged by the service clock), applied once per event
 * id, and each only moving our records forward. For a payment the event's copy of the intent is
 * not trusted (events arrive late, twice and out of order): the intent is retrieved and its
 * current status applied.
 *
 * | pattern                         | index | key                                                     |
 * |---------------------------------|-------|---------------------------------------------------------|
 * | applied event by id (dedupe)    | table | pk = PROVIDER_EVENT#stripe#<event id>, sk = PROVIDER_EVENT |
 */
const TOLERANCE_SECONDS = 300;
/** Stripe retries a delivery for up to three days; a marker outlives that. */
const MARKER_SECONDS = 30 * 86_400;

const markerKey = (eventId: string) => ({ pk: key('PROVIDER_EVENT', 'stripe', eventId), sk: 'PROVIDER_EVENT' });

export type EventResult = { received: true; applied: boolean; duplicate?: true };

export async function receiveStripeEvent(rawBody: string, signature: string | undefined): Promise<EventResult> {
  const { webhookSecret } = await stripeKeys();
  const refuse = (message: string) => ValidationError.field('Stripe-Signature', 'error.validation.not_valid', message);
  if (!webhookSecret) throw refuse('No Stripe webhook secret is configured (SVC_STRIPE_WEBHOOK_SECRET)');
  if (!signature) throw refuse('The Stripe-Signature header is missing');
  const webhooks = await stripeWebhooks();
  let event: Stripe.Event | undefined;
  for (const secret of webhookSecret.split(',').map((part) => part.trim())) {
    if (!secret) continue;
    try {
      event = webhooks.constructEvent(rawBody, signature, secret, TOLERANCE_SECONDS, undefined, now() * 1000);
      break;
    } catch {
      // Another configured secret may match (a Connect endpoint's, or the one being rolled to).
    }
  }
  if (!event) {
    // The alarm on refused deliveries counts this line (infra: STRIPE_SIGNATURE_REFUSED).
    logger.warn('Stripe event refused: bad signature');
    throw refuse('The Stripe-Signature does not match the body, or is older than 5 minutes');
  }
  if (await getItem(markerKey(event.id))) return { received: true, applied: false, duplicate: true };
  const applied = await applyEvent(event);
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...markerKey(event.id),
        entity: 'provider_event',
        type: event.type,
        [TTL_ATTRIBUTE]: now() + MARKER_SECONDS,
      },
    }),
  );
  return { received: true, applied };
}

async function applyEvent(event: Stripe.Event): Promise<boolean> {
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.processing':
    case 'payment_intent.canceled':
    case 'payment_intent.requires_action':
      return settleIntent(event.data.object);
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated':
      return refundUpdated(event.data.object);
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed':
      return disputeUpdated(event, event.data.object);
    case 'charge.refunded':
      return chargeRefunded(event, event.data.object);
    // Acknowledged: mandates and setup intents need nothing of ours.
    case 'setup_intent.succeeded':
    case 'mandate.updated':
      return true;
    default:
      return false;
  }
}

async function settleIntent(intent: Stripe.PaymentIntent): Promise<boolean> {
  const uuid = intent.metadata?.svc_reference;
  if (!uuid) return false;
  const current = (stored: PaymentRecord) =>
    stripeProvider.outcomeOf(uuid, {
      context: storedContext(stored),
      providerReference: stored.provider_reference ?? intent.id,
      paymentUuid: stored.uuid,
    });
  const payment = await settleFromProvider(uuid, current);
  if (payment) return true;
  // A recurring charge: its reference is the charge attempt's uuid, its payment's derived from it.
  const recurring = await findPayment(derivedUuid('payment', uuid));
  if (recurring?.charge_attempt_uuid !== uuid) return false;
  return (await settleRecurringFromProvider(recurring, current)) !== undefined;
}

async function refundUpdated(refund: Stripe.Refund): Promise<boolean> {
  const refundUuid = refund.metadata?.svc_reference;
  const paymentUuid = refund.metadata?.svc_payment_uuid;
  if (!refundUuid || !paymentUuid) return false;
  if (refund.status !== 'failed' && refund.status !== 'canceled') return true;
  await failRefund(paymentUuid, refundUuid, refund.failure_reason ?? refund.status);
  return true;
}

/**
 * A charge refunded: refunds we asked for are recorded already; one made at Stripe without us (in
 * its dashboard) is recorded now. Stripe is asked for the intent's refunds rather than trusting
 * the event's copy.
 */
async function chargeRefunded(event: Stripe.Event, charge: Stripe.Charge): Promise<boolean> {
  const intentId = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
  const stripe = intentId ? await stripeClient(!event.livemode) : undefined;
  if (!intentId || !stripe) return false;
  const options = event.account ? { stripeAccount: event.account } : {};
  const intent = await stripe.paymentIntents.retrieve(intentId, {}, options);
  const payment = await paymentOfIntent(intent.metadata?.svc_reference);
  if (!payment) return false;
  const listed = await stripe.refunds.list({ payment_intent: intentId, limit: 100 }, options);
  const theirs = listed.data.filter(
    (refund) => !refund.metadata?.svc_reference && (refund.status === 'succeeded' || refund.status === 'pending'),
  );
  await recordProviderRefunds(
    payment.uuid,
    theirs.map((refund) => ({ providerReference: refund.id, amountMinor: refund.amount })),
  );
  return true;
}

/** Our payment of an intent: by our reference, or a recurring charge's (derived from its attempt). */
async function paymentOfIntent(reference: string | undefined): Promise<PaymentRecord | undefined> {
  if (!reference) return undefined;
  return (await findPayment(reference)) ?? (await findPayment(derivedUuid('payment', reference)));
}

async function disputeUpdated(event: Stripe.Event, dispute: Stripe.Dispute): Promise<boolean> {
  const intentId = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : dispute.payment_intent?.id;
  if (!intentId) return false;
  // The dispute names the intent; our uuid is in the intent's metadata.
  const stripe = await stripeClient(!event.livemode);
  if (!stripe) return false;
  const intent = await stripe.paymentIntents.retrieve(
    intentId,
    {},
    event.account ? { stripeAccount: event.account } : {},
  );
  const uuid = intent.metadata?.svc_reference;
  if (!uuid) return false;
  const payment = await recordDispute(uuid, {
    providerReference: dispute.id,
    status: dispute.status,
    reason: dispute.reason,
    amountMinor: dispute.amount,
    closed: event.type === 'charge.dispute.closed',
  });
  return payment !== undefined;
}
