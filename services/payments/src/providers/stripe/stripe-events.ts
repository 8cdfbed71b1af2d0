import { PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  BUSINESS_METRICS,
  derivedUuid,
  fromProviderAmount,
  logger,
  now,
  recordMetric,
  ValidationError,
} from '@svc/core';
import { db, defineEntity, getItem, retryOnConflict, TTL_ATTRIBUTE, tableName } from '@svc/table';
import type Stripe from 'stripe';
import * as z from 'zod';
import { settlePendingSource } from '../../domain/approval';
import { storedContext } from '../../domain/context';
import { type BoundRecord, boundToCallback, type CallbackClaim } from '../../domain/provider-binding';
import {
  applyProviderRefunds,
  heldBy,
  recordDispute,
  recordRecurringPaidAfterFailure,
  settleFromProvider,
  settleRecurringFromProvider,
} from '../../domain/provider-updates';
import { deactivateSource } from '../../domain/source-updates';
import { findPayment, type PaymentRecord } from '../../repository/payment-repository';
import { findPaymentSource } from '../../repository/payment-source-repository';
import { stripeClient, stripeKeys, stripeKeysAfterRefusal, stripeWebhooks } from './stripe-config';
import { refundOutcome } from './stripe-mapping';
import { stripeProvider } from './stripe-provider';

/**
 * Stripe's event deliveries (`POST /providers/stripe/events`): verified with the SDK's signature
 * check on the raw body (5-minute tolerance, judged by the service clock), applied once per event
 * id, and each only moving our records forward. The event's copy of an object is not trusted
 * (events arrive late, twice and out of order): the object is retrieved and its current state
 * applied. `pnpm ops stripe:events` feeds missed events from Stripe's Events API through
 * `applyStripeEvent`, the same code.
 *
 * Every event finds its payment the same way (`paymentOfIntent`): our uuid in the intent's
 * metadata names the payment, or, for a recurring charge, the charge attempt whose payment's uuid
 * is derived from it.
 * An applied event is marked by `PROVIDER_EVENT` below (docs/access-patterns.md).
 */
const TOLERANCE_SECONDS = 300;
/** Stripe retries a delivery for up to three days; a marker outlives that. */
const MARKER_SECONDS = 30 * 86_400;

/** The events the endpoint is subscribed to (`pnpm ops stripe:webhook-endpoint` registers these). */
export const HANDLED_STRIPE_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.processing',
  'payment_intent.canceled',
  'payment_intent.requires_action',
  'setup_intent.succeeded',
  'setup_intent.setup_failed',
  'setup_intent.canceled',
  'setup_intent.requires_action',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'charge.refund.updated',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
  'mandate.updated',
] as const;

/** Logged when a thin event (an event destination's `v2.core.event` notification) arrives. */
export const STRIPE_THIN_EVENT_REFUSED = 'Stripe thin event refused: this endpoint takes snapshot events';

const markerSchema = z.object({ provider: z.string(), event_id: z.string(), type: z.string(), expires_at: z.number() });

/** That a provider's event was applied: read for its presence only, removed by TTL. */
export const PROVIDER_EVENT = defineEntity<z.infer<typeof markerSchema>, readonly [string, string]>({
  name: 'provider_event',
  summary: 'That a provider’s event (a Stripe event) was applied, so a redelivery changes nothing (TTL 30 days).',
  prefix: 'PROVIDER_EVENT',
  idShown: '<provider>#<event id>',
  sort: 'PROVIDER_EVENT',
  id: (marker) => [marker.provider, marker.event_id] as const,
  idParts: ([provider, eventId]) => [provider, eventId],
  byKey: 'applied event by id (dedupe)',
  storage: {
    toAttributes: ({ type, expires_at }) => ({ type, [TTL_ATTRIBUTE]: expires_at }),
    fromAttributes: (item) => {
      const [, provider, event_id] = String(item.pk).split('#');
      return { provider, event_id, type: item.type, expires_at: item[TTL_ATTRIBUTE] };
    },
  },
  parse: (value) => markerSchema.parse(value),
});

const markerKey = (eventId: string) => PROVIDER_EVENT.key(['stripe', eventId]);

export type EventResult = { received: true; applied: boolean; duplicate?: true };

export async function receiveStripeEvent(rawBody: string, signature: string | undefined): Promise<EventResult> {
  const webhooks = await stripeWebhooks();
  let outcome = verifiedEvent(webhooks, (await stripeKeys()).webhookSecret, rawBody, signature);
  if (!('event' in outcome)) {
    // Perhaps signed with a secret rolled since this container read it: read it again (at most
    // once per KEY_REREAD_SECONDS) and check once more.
    const fresh = await stripeKeysAfterRefusal();
    if (fresh) outcome = verifiedEvent(webhooks, fresh.webhookSecret, rawBody, signature);
  }
  if (!('event' in outcome)) {
    // Counted (ProviderCallbacksRefused, alarmed per provider) and logged: a wrong webhook secret
    // after a roll, or someone knocking on the endpoint.
    recordMetric(BUSINESS_METRICS.providerCallbacksRefused, 1, { provider: 'stripe', reason: outcome.reason });
    logger.warn(STRIPE_SIGNATURE_REFUSED, { reason: outcome.reason });
    throw ValidationError.field('Stripe-Signature', 'error.validation.not_valid', outcome.message);
  }
  return applyOnce(outcome.event);
}

/** Logged (with ProviderCallbacksRefused counted) for each event delivery refused. */
export const STRIPE_SIGNATURE_REFUSED = 'Stripe event refused: bad signature';

type Verified = { event: Stripe.Event } | { reason: 'signature' | 'no_key'; message: string };

/** The event, if one of the webhook secrets signed the body; else why not. */
function verifiedEvent(
  webhooks: typeof Stripe.webhooks,
  webhookSecret: string | undefined,
  rawBody: string,
  signature: string | undefined,
): Verified {
  if (!webhookSecret)
    return { reason: 'no_key', message: 'No Stripe webhook secret is configured (SVC_STRIPE_WEBHOOK_SECRET)' };
  if (!signature) return { reason: 'signature', message: 'The Stripe-Signature header is missing' };
  for (const secret of webhookSecret.split(',').map((part) => part.trim())) {
    if (!secret) continue;
    try {
      return {
        event: webhooks.constructEvent(rawBody, signature, secret, TOLERANCE_SECONDS, undefined, now() * 1000),
      };
    } catch (error) {
      // Another configured secret may match (a Connect endpoint's, or the one being rolled to).
      if ((error as { type?: string }).type === 'StripeSignatureVerificationError') continue;
      // The signature held, but the SDK will not build a snapshot event from this body: a thin
      // event (`v2.core.event`, from an event destination), which carries no object to apply.
      logger.warn(STRIPE_THIN_EVENT_REFUSED, { reason: error instanceof Error ? error.message : String(error) });
      throw ValidationError.field(
        'body',
        'error.validation.not_supported',
        'Thin events are not handled: register this endpoint for snapshot events (pnpm ops stripe:webhook-endpoint)',
      );
    }
  }
  return { reason: 'signature', message: 'The Stripe-Signature does not match the body, or is older than 5 minutes' };
}

/** Applies an event unless one of the same id was applied before; the marker is written after. */
export async function applyOnce(event: Stripe.Event): Promise<EventResult> {
  if (await getItem(markerKey(event.id))) return { received: true, applied: false, duplicate: true };
  const applied = await applyStripeEvent(event);
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: PROVIDER_EVENT.item({
        provider: 'stripe',
        event_id: event.id,
        type: event.type,
        expires_at: now() + MARKER_SECONDS,
      }),
    }),
  );
  return { received: true, applied };
}

/** Whether the event changed or confirmed something of ours. */
export async function applyStripeEvent(event: Stripe.Event): Promise<boolean> {
  const on = connection(event);
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.processing':
    case 'payment_intent.canceled':
    case 'payment_intent.requires_action':
      return settleIntent(on, event.data.object, event.type === 'payment_intent.succeeded');
    case 'setup_intent.succeeded':
    case 'setup_intent.setup_failed':
    case 'setup_intent.canceled':
    case 'setup_intent.requires_action':
      return settleSetup(on, event.data.object);
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated':
      return refundsOfIntent(on, idOf(event.data.object.payment_intent));
    case 'charge.refunded':
      return refundsOfIntent(on, idOf(event.data.object.payment_intent));
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed':
    case 'charge.dispute.funds_withdrawn':
    case 'charge.dispute.funds_reinstated':
      return disputeUpdated(on, event.type, event.data.object);
    case 'mandate.updated':
      return mandateUpdated(on, event.data.object);
    default:
      return false;
  }
}

/**
 * The client and account an event's objects are read with (its mode's key, its connected
 * account), and what the event speaks for. Stripe sets `account` on every event of a connected
 * account ("The connected account that originates the event",
 * https://docs.stripe.com/api/events/object#event_object-account; absent for the platform's own)
 * and `livemode` on every event (#event_object-livemode): an event is bound to the payment only
 * when both are the payment's (domain/provider-binding.ts).
 */
interface Connection {
  stripe: () => Promise<Stripe | undefined>;
  options: Stripe.RequestOptions;
  account: string | undefined;
  live: boolean;
  type: string;
}

function connection(event: Stripe.Event): Connection {
  return {
    stripe: () => stripeClient(!event.livemode),
    options: event.account ? { stripeAccount: event.account } : {},
    account: event.account ?? undefined,
    live: event.livemode,
    type: event.type,
  };
}

/** Whether the event may change `record`: what it claims about the intent (or setup) is what we stored. */
function bound(
  on: Connection,
  record: BoundRecord,
  object: { id: string; amount?: number; currency?: string | null } | undefined,
): boolean {
  return boundToCallback(record, claimOf(on, object), `stripe ${on.type}`);
}

/**
 * What an event claims about the intent (or setup) it names: its amount as Stripe counts it, which
 * the binding compares with ours in Stripe's minor units (provider-binding.ts).
 */
function claimOf(
  on: Connection,
  object: { id: string; amount?: number; currency?: string | null } | undefined,
): CallbackClaim {
  return {
    provider: 'stripe',
    account: on.account,
    live: on.live,
    reference: object?.id,
    amountMinor: object?.amount,
    currency: object?.currency ?? undefined,
  };
}

function idOf(value: string | { id: string } | null | undefined): string | undefined {
  if (!value) return undefined;
  return typeof value === 'string' ? value : value.id;
}

/**
 * An amount Stripe reports about a payment (a refund's, a dispute's) in our minor units: ISK and
 * UGX amounts are written with two decimals at Stripe, MGA with none
 * (https://docs.stripe.com/currencies). One that is no whole ISO amount (a fraction of a króna,
 * which Stripe refuses to charge or refund) throws: the event is answered with an error and
 * Stripe sends it again, rather than a wrong amount recorded.
 */
function ourAmount(payment: Pick<PaymentRecord, 'currency'>, stripeMinor: number): number {
  return fromProviderAmount('stripe', payment.currency, stripeMinor);
}

/** Our payment of an intent: by our reference, or a recurring charge's (derived from its attempt). */
export async function paymentOfIntent(
  intent: Pick<Stripe.PaymentIntent, 'metadata'> | undefined,
): Promise<PaymentRecord | undefined> {
  const reference = intent?.metadata?.svc_reference;
  if (!reference) return undefined;
  return (await findPayment(reference)) ?? (await findPayment(derivedUuid('payment', reference)));
}

async function settleIntent(on: Connection, intent: Stripe.PaymentIntent, succeeded: boolean): Promise<boolean> {
  const payment = await paymentOfIntent(intent);
  if (!payment) return false;
  // Recorded at another provider of its route: Stripe's money on it is alarmed, never applied
  // (and only when this account and mode were that route's Stripe candidate).
  const held = heldBy(payment, claimOf(on, intent), succeeded, `stripe ${on.type}`);
  if (held !== 'held') return held === 'elsewhere';
  if (!bound(on, payment, intent)) return false;
  const current = (stored: PaymentRecord) =>
    stripeProvider.outcomeOf(stored.uuid, {
      context: storedContext(stored),
      providerReference: stored.provider_reference ?? intent.id,
      paymentUuid: stored.uuid,
    });
  if (payment.charge_attempt_uuid) {
    if (payment.status === 'failed' && succeeded && (await current(payment)).status === 'succeeded') {
      // A charge attempt we had failed was paid after all: recorded as paid (issue 45, point 6);
      // if dunning had paid its invoice again meanwhile, a person refunds one (alarmed).
      await recordRecurringPaidAfterFailure(payment, payment.provider_reference ?? intent.id);
      return true;
    }
    return (await settleRecurringFromProvider(payment, current)) !== undefined;
  }
  // Money Stripe says it took is recorded, also on a payment we had failed.
  return (await settleFromProvider(payment.uuid, current, { reviveFailed: succeeded })) !== undefined;
}

async function settleSetup(on: Connection, setup: Stripe.SetupIntent): Promise<boolean> {
  const uuid = setup.metadata?.svc_reference;
  if (!uuid) return false;
  const found = await findPaymentSource(uuid);
  if (!found) return false;
  if (!bound(on, found, { id: setup.id })) return false;
  const settled = await retryOnConflict(async () => {
    const source = await findPaymentSource(uuid);
    if (source?.status !== 'pending') return source;
    const outcome = await stripeProvider.sourceOutcomeOf({
      context: storedContext(source),
      providerReference: source.provider_reference ?? setup.id,
    });
    return settlePendingSource(source, outcome);
  });
  return settled !== undefined;
}

/**
 * The refunds of an intent as Stripe has them now (`refunds.list`): ours settle (pending →
 * succeeded or failed), and ones made in Stripe's dashboard are recorded, pending until Stripe
 * has settled them.
 */
async function refundsOfIntent(on: Connection, intentId: string | undefined): Promise<boolean> {
  const stripe = await on.stripe();
  if (!intentId || !stripe) return false;
  const intent = await stripe.paymentIntents.retrieve(intentId, {}, on.options);
  const payment = await paymentOfIntent(intent);
  if (!payment || !bound(on, payment, intent)) return false;
  const refunds: Parameters<typeof applyProviderRefunds>[1][number][] = [];
  for await (const made of stripe.refunds.list({ payment_intent: intentId, limit: 100 }, on.options)) {
    const ours = made.metadata?.svc_reference;
    refunds.push({
      uuid: ours ?? derivedUuid('refund', made.id),
      providerReference: made.id,
      amountMinor: ourAmount(payment, made.amount),
      outcome: refundOutcome(made),
    });
  }
  await applyProviderRefunds(payment.uuid, refunds);
  return true;
}

/**
 * A dispute's change: its status read from Stripe now (an event's copy may be older than one
 * applied already), and the funds as the event says they moved. A SEPA debit returned after it
 * succeeded arrives the same way: a dispute that is final at once (`lost`, funds withdrawn).
 */
async function disputeUpdated(on: Connection, type: string, copy: Stripe.Dispute): Promise<boolean> {
  const stripe = await on.stripe();
  if (!stripe) return false;
  const dispute = await stripe.disputes.retrieve(copy.id, {}, on.options);
  const intentId = idOf(dispute.payment_intent);
  if (!intentId) return false;
  const intent = await stripe.paymentIntents.retrieve(intentId, {}, on.options);
  const payment = await paymentOfIntent(intent);
  if (!payment || !bound(on, payment, intent)) return false;
  const funds =
    type === 'charge.dispute.funds_withdrawn'
      ? 'withdrawn'
      : type === 'charge.dispute.funds_reinstated'
        ? 'reinstated'
        : undefined;
  const recorded = await recordDispute(payment.uuid, {
    providerReference: dispute.id,
    status: dispute.status,
    reason: dispute.reason,
    amountMinor: ourAmount(payment, dispute.amount),
    funds,
  });
  return recorded !== undefined;
}

/**
 * A mandate no longer active (the donor revoked it at their bank): the source saved with its
 * payment method is deactivated and announced. The payment method's metadata names the source
 * (or the payment that saved it).
 */
async function mandateUpdated(on: Connection, copy: Stripe.Mandate): Promise<boolean> {
  const stripe = await on.stripe();
  if (!stripe) return false;
  const mandate = await stripe.mandates.retrieve(copy.id, {}, on.options);
  if (mandate.status !== 'inactive') return true;
  const methodId = idOf(mandate.payment_method);
  if (!methodId) return false;
  const method = await stripe.paymentMethods.retrieve(methodId, {}, on.options);
  const reference = method.metadata?.svc_reference;
  if (!reference) return false;
  const sourceUuid = (await findPaymentSource(reference))
    ? reference
    : (await findPayment(reference))?.created_payment_source_uuid;
  const source = sourceUuid ? await findPaymentSource(sourceUuid) : undefined;
  // The mandate names no intent of the source's: provider, account and mode bind it.
  if (!source || !sourceUuid || !bound(on, source, undefined)) return false;
  return (await deactivateSource(sourceUuid, 'mandate_inactive')) !== undefined;
}
