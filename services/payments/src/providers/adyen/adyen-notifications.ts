import { timingSafeEqual } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  BUSINESS_METRICS,
  derivedUuid,
  fromProviderAmount,
  logger,
  now,
  recordMetric,
  ServiceUnavailableError,
  UnauthorizedError,
  UnrepresentableAmountError,
  ValidationError,
} from '@svc/core';
import { db, getItem, retryOnConflict, tableName } from '@svc/table';
import * as z from 'zod';
import { attachLateInstrument, settlePending, settlePendingSource } from '../../domain/approval';
import {
  isWritten,
  keepEarlyCallback,
  readEarly,
  settleKept,
  UNRECORDED_PAYMENT,
} from '../../domain/early-callback-store';
import { paymentStatusEvents } from '../../domain/events';
import { type BoundRecord, boundToCallback, type CallbackClaim } from '../../domain/provider-binding';
import {
  applyProviderRefunds,
  heldBy,
  recordDispute,
  recordRecurringPaidAfterFailure,
  SUCCEEDED_AFTER_FAILURE,
  settleFromProvider,
  settleRecurringFromProvider,
} from '../../domain/provider-updates';
import { savePaymentVersion, saveSourceVersion } from '../../domain/versioned';
import { findPayment, type PaymentRecord } from '../../repository/payment-repository';
import { findPaymentSource } from '../../repository/payment-source-repository';
import type { FoundOutcome } from '../provider';
import { PROVIDER_EVENT } from '../stripe/stripe-events';
import { type AdyenKeys, adyenKeys, adyenKeysAfterRefusal } from './adyen-config';
import { adyenInstrumentToken, refusalReason, storedMethodId } from './adyen-provider';

/**
 * Adyen's standard notifications (`POST /providers/adyen/notifications`).
 *
 * - Authenticated by basic auth when a user and password are configured (Adyen sends the ones set
 *   on its webhook), and by every item's HMAC signature (`additionalData.hmacSignature`, HMAC-SHA256
 *   with the hex key over pspReference, originalReference, merchantAccountCode, merchantReference,
 *   value, currency, eventCode and success joined by `:`, checked with the library's
 *   HmacValidator; https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures/).
 *   One bad item refuses the whole batch (400) and nothing of it is applied.
 * - Answered `[accepted]` once every item is applied: Adyen retries a batch it did not get
 *   `[accepted]` for (https://docs.adyen.com/development-resources/webhooks/#accept-webhooks), so an
 *   item whose payment is not written yet (a notification faster than our own write) fails the
 *   batch with 503 and is applied on Adyen's retry.
 * - Applied once per `pspReference` + `eventCode` + `success` (a PROVIDER_EVENT marker) and
 *   order-independent: each moves our records forward only, and facts that outrank a later copy
 *   (a cancellation, a reversed chargeback) are kept as markers of the payment's pspReference.
 *
 * Adyen's API reads nothing back, so the notification itself is the provider's word: HMAC-signed
 * with our key, it is trusted as Stripe's retrieved objects are, but only about what its merchant
 * account holds. Every charity's merchant account sends through the same webhook and key, and
 * `merchantReference` is free text any of them can set, so an item changes a payment or source
 * only when its `merchantAccountCode`, the batch's `live`, its pspReference (the payment's own,
 * or `originalReference` for a modification) and its amount and currency are what we stored
 * (domain/provider-binding.ts). Fields: NotificationRequestItem has `merchantAccountCode`,
 * `pspReference`, `originalReference` ("for modifications, the pspReference of the original
 * payment"), `amount` {value, currency}; the request has `live` ("true"/"false")
 * (https://docs.adyen.com/api-explorer/Webhooks/1/post/AUTHORISATION, and the library's
 * src/typings/notification/notificationRequestItem.ts in github:Adyen/adyen-node-api-library).
 */
const MARKER_SECONDS = 60 * 86_400;

/**
 * What an item must have for us to act on it; anything else in it is fine (Adyen adds fields).
 * `additionalData` values are mostly strings, but not all: `metadata` is an object there (the
 * review in issue 45 of Adyen's Webhooks description, Adyen/adyen-openapi
 * json/WebhooksService-v1.json; not re-read here), so only its string values are read.
 */
const itemSchema = z.looseObject({
  pspReference: z.string().min(1).max(64),
  originalReference: z.string().max(64).optional(),
  merchantAccountCode: z.string().max(200),
  merchantReference: z.string().max(200),
  eventCode: z.string().min(1).max(100),
  eventDate: z.string().max(64).optional(),
  success: z.enum(['true', 'false']),
  reason: z.string().max(2_000).optional(),
  amount: z.object({ value: z.number().int(), currency: z.string() }),
  additionalData: z
    .record(z.string(), z.unknown())
    .optional()
    .transform((data) =>
      data === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(data).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
          ),
    ),
});
type Item = z.infer<typeof itemSchema>;

/** The batch: its mode and its items, each read on its own (one unusable item is no reason to refuse the others). */
const bodySchema = z.object({
  live: z.enum(['true', 'false']),
  notificationItems: z
    .array(z.object({ NotificationRequestItem: z.record(z.string(), z.unknown()) }))
    .min(1)
    .max(1_000),
});

/**
 * Logged (ProviderAnomalies, kind unusable_notification, alarmed) for a correctly signed item we
 * cannot read: it is acknowledged with the others, since Adyen retries a batch it did not get
 * `[accepted]` for, and a batch refused for ever holds the notifications queued behind it
 * (https://docs.adyen.com/development-resources/webhooks/#accept-webhooks). A person applies it.
 */
export const UNUSABLE_NOTIFICATION = 'A signed Adyen notification item could not be read: acknowledged, not applied';

/** The notifications this endpoint acts on; the others are accepted and ignored. */
export const HANDLED_ADYEN_EVENTS = [
  'AUTHORISATION',
  'CANCELLATION',
  'TECHNICAL_CANCEL',
  'REFUND',
  'CANCEL_OR_REFUND',
  'REFUND_FAILED',
  'REFUNDED_REVERSED',
  'NOTIFICATION_OF_CHARGEBACK',
  'CHARGEBACK',
  'SECOND_CHARGEBACK',
  'CHARGEBACK_REVERSED',
  'CAPTURE_FAILED',
  'EXPIRE',
  'RECURRING_CONTRACT',
  'OFFER_CLOSED',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A notification whose payment is not (yet) ours to find: the batch is retried by Adyen. */
class NotYetKnown extends ServiceUnavailableError {}

export async function receiveAdyenNotifications(
  rawBody: string,
  authorization: string | undefined,
): Promise<{ applied: number; duplicates: number }> {
  let parsed: z.infer<typeof bodySchema> | undefined;
  const batch = () => {
    try {
      parsed ??= bodySchema.parse(JSON.parse(rawBody));
    } catch {
      throw ValidationError.field('body', 'error.validation.not_valid', 'Not a batch of Adyen notifications');
    }
    return parsed;
  };
  const { HmacValidator } = await import('@adyen/api-library/lib/src/utils/hmacValidator').then((m) => ({
    HmacValidator: m.default,
  }));
  const validator = new HmacValidator();
  let refusal = refusalOf(await adyenKeys(), authorization, batch, validator);
  if (refusal) {
    // Perhaps a key or password rolled since this container read the secret: read it again (at
    // most once per KEY_REREAD_SECONDS) and check once more.
    const fresh = await adyenKeysAfterRefusal();
    if (fresh) refusal = refusalOf(fresh, authorization, batch, validator);
  }
  if (refusal) {
    // Counted (ProviderCallbacksRefused, alarmed per provider, as Stripe's) and logged: a key
    // rolled at Adyen and not in the secret, or someone knocking on the endpoint.
    recordMetric(BUSINESS_METRICS.providerCallbacksRefused, 1, { provider: 'adyen', reason: refusal.reason });
    logger.warn(ADYEN_NOTIFICATION_REFUSED, { reason: refusal.reason, ...refusal.item });
    throw refusal.error;
  }
  const raw = batch().notificationItems.map((entry) => entry.NotificationRequestItem);
  let applied = 0;
  let duplicates = 0;
  const live = batch().live === 'true';
  for (const signed of raw) {
    const item = itemSchema.safeParse(signed);
    if (!item.success) {
      recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'unusable_notification' });
      logger.error(UNUSABLE_NOTIFICATION, {
        psp: typeof signed.pspReference === 'string' ? signed.pspReference : null,
        event: typeof signed.eventCode === 'string' ? signed.eventCode : null,
        problems: item.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
      });
      continue;
    }
    try {
      if (await applyOnce(item.data, live)) applied += 1;
      else duplicates += 1;
    } catch (error) {
      // An amount that is no whole amount of ours (a fraction of a króna): unusable, as above.
      if (!(error instanceof UnrepresentableAmountError)) throw error;
      recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'unusable_notification' });
      logger.error(UNUSABLE_NOTIFICATION, {
        psp: item.data.pspReference,
        event: item.data.eventCode,
        problems: [`amount: ${error.message}`],
      });
    }
  }
  return { applied, duplicates };
}

/** Logged (with ProviderCallbacksRefused counted) for each notification batch refused. */
export const ADYEN_NOTIFICATION_REFUSED = 'Adyen notification refused';

interface Refusal {
  reason: 'basic_auth' | 'no_key' | 'signature';
  error: Error;
  /** The item whose signature failed. */
  item?: { psp: string; event: string };
}

/**
 * Why these keys refuse the batch, or undefined: the basic auth when one is configured (401),
 * then an HMAC key configured, then (the body read) every item's HMAC signature (400).
 */
function refusalOf(
  keys: AdyenKeys,
  authorization: string | undefined,
  batch: () => z.infer<typeof bodySchema>,
  validator: { validateHMAC(item: never, key: string): boolean },
): Refusal | undefined {
  if (
    keys.notificationUsername &&
    !basicAuthHolds(authorization, keys.notificationUsername, keys.notificationPassword ?? '')
  )
    return { reason: 'basic_auth', error: new UnauthorizedError('Adyen notifications need the configured basic auth') };
  const refuse = (message: string) => ValidationError.field('hmacSignature', 'error.validation.not_valid', message);
  if (keys.hmacKeys.length === 0)
    return { reason: 'no_key', error: refuse('No Adyen HMAC key is configured (SVC_ADYEN_HMAC_KEY)') };
  for (const { NotificationRequestItem: item } of batch().notificationItems) {
    const signed = keys.hmacKeys.some((key) => {
      try {
        return validator.validateHMAC(item as never, key);
      } catch {
        return false;
      }
    });
    if (!signed)
      return {
        reason: 'signature',
        error: refuse(`The HMAC signature of ${String(item.eventCode)} ${String(item.pspReference)} does not match`),
        item: { psp: String(item.pspReference ?? ''), event: String(item.eventCode ?? '') },
      };
  }
  return undefined;
}

function basicAuthHolds(header: string | undefined, username: string, password: string): boolean {
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const markerKey = (id: string) => PROVIDER_EVENT.key(['adyen', id]);

async function mark(id: string, type: string): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: PROVIDER_EVENT.item({ provider: 'adyen', event_id: id, type, expires_at: now() + MARKER_SECONDS }),
    }),
  );
}

/** Applies an item unless one of the same pspReference, eventCode and success was applied before. */
async function applyOnce(item: Item, live: boolean): Promise<boolean> {
  const id = `${item.pspReference}#${item.eventCode}#${item.success}`;
  if (await getItem(markerKey(id))) return false;
  const received: Received = { item, live };
  await applyAdyenNotification(received);
  // An item that did not bind leaves no marker: its key (pspReference, eventCode, success) must
  // not keep out the item that does.
  if (!received.unbound) await mark(id, item.eventCode);
  return true;
}

/** The payment's own pspReference: a modification's notification names it as `originalReference`. */
const paymentPsp = (item: Item) => item.originalReference || item.pspReference;
const fact = (psp: string, name: string) => `fact#${psp}#${name}`;

/** Our payment named by a reference we sent: a payment's uuid, or a recurring charge attempt's. */
async function paymentOf(reference: string): Promise<PaymentRecord | undefined> {
  if (!UUID.test(reference)) return undefined;
  return (await findPayment(reference)) ?? (await findPayment(derivedUuid('payment', reference)));
}

/**
 * A notification's payment is not written after this long: its request died after Adyen acted
 * and was never retried (our request budget is 30 s; a client retries within minutes).
 */
export const UNRECORDED_AFTER_SECONDS = 3600;

/** Logged (ProviderAnomalies, kind cancelled_after_success, alarmed) when Adyen cancels a payment we recorded as paid. */
export const CANCELLED_AFTER_SUCCESS = 'Adyen cancelled a payment recorded as paid';

/**
 * Ours but not written yet (the answer to our request is still on its way): 503, and Adyen sends
 * the batch again. Once UNRECORDED_AFTER_SECONDS have passed since Adyen's event, it never will
 * be: money taken is alerted to a person (the pspReference names it at Adyen), and the item is
 * accepted so it does not hold up the others of its batch.
 */
function notYet(item: Item): void {
  const at = item.eventDate ? Math.floor(Date.parse(item.eventDate) / 1000) : Number.NaN;
  if (Number.isFinite(at) && now() - at >= UNRECORDED_AFTER_SECONDS) {
    if (item.success === 'true' && item.eventCode === 'AUTHORISATION') {
      recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'unrecorded_payment' });
      logger.error(UNRECORDED_PAYMENT, { reference: item.merchantReference, psp: item.pspReference });
    }
    return;
  }
  throw new NotYetKnown(`No payment ${item.merchantReference} yet for ${item.eventCode} ${item.pspReference}`);
}

/**
 * An AUTHORISATION of ours whose payment (or source) is not written yet: the answer to our
 * request is still on its way, or was lost and its retry has not come. Adyen does not resend
 * every card notification, so it is not left to a retry: it is kept and applied once the payment
 * is written (domain/early-callbacks.ts), and alarmed if that never happens. One already older
 * than UNRECORDED_AFTER_SECONDS is alarmed at once.
 */
async function keepEarly(received: Received): Promise<void> {
  const { item } = received;
  const at = item.eventDate ? Math.floor(Date.parse(item.eventDate) / 1000) : Number.NaN;
  if (Number.isFinite(at) && now() - at >= UNRECORDED_AFTER_SECONDS) return notYet(item);
  await keepEarlyCallback('adyen', item.merchantReference, JSON.stringify({ item, live: received.live }));
  // Written meanwhile (its request looked for callbacks before this one was kept): applied now.
  if (!(await isWritten(item.merchantReference))) return;
  const kept = await readEarly(item.merchantReference);
  if (!kept?.pending) return;
  for (const payload of kept.payloads) await applyEarlyAdyenCallback(payload);
  await settleKept(item.merchantReference, kept.payloads.length);
}

/** A kept AUTHORISATION, applied now that its payment is written (adyenProvider.applyEarlyCallback). */
export async function applyEarlyAdyenCallback(payload: string): Promise<void> {
  const { item, live } = JSON.parse(payload) as { item: Item; live: boolean };
  const received: Received = { item, live };
  await applyAdyenNotification(received);
}

/** An item and the batch's mode: what it may claim to speak for. */
interface Received {
  item: Item;
  live: boolean;
  /** Set when the item named something its merchant account does not hold. */
  unbound?: boolean;
}

/**
 * Whether the item may change `record`: its merchant account and mode always, and `fields` (the
 * references and amounts this kind of notification carries) as each caller says.
 */
function bound(received: Received, record: BoundRecord, fields: Partial<CallbackClaim>): boolean {
  const { item, live } = received;
  const ok = boundToCallback(
    record,
    { provider: 'adyen', account: item.merchantAccountCode, live, ...fields },
    `adyen ${item.eventCode}`,
  );
  if (!ok) received.unbound = true;
  return ok;
}

/** A modification (refund, chargeback, cancel) names its payment by `originalReference`, and moves at most its amount. */
const modificationOf = (item: Item): Partial<CallbackClaim> => ({
  reference: item.originalReference || undefined,
  atMostMinor: item.amount.value,
  currency: item.amount.currency,
});

export async function applyAdyenNotification(received: Received): Promise<void> {
  const { item } = received;
  switch (item.eventCode) {
    case 'AUTHORISATION':
      return authorisation(received);
    case 'CANCELLATION':
    case 'TECHNICAL_CANCEL':
      return cancellation(received);
    case 'REFUND':
    case 'CANCEL_OR_REFUND':
    case 'REFUND_FAILED':
    case 'REFUNDED_REVERSED':
      return refunded(received);
    case 'NOTIFICATION_OF_CHARGEBACK':
    case 'CHARGEBACK':
    case 'SECOND_CHARGEBACK':
    case 'CHARGEBACK_REVERSED':
      return chargeback(received);
    case 'CAPTURE_FAILED':
    case 'EXPIRE':
      return captureFailed(received);
    case 'RECURRING_CONTRACT':
      return recurringContract(received);
    case 'OFFER_CLOSED':
      return offerClosed(received);
    default:
      return;
  }
}

function instrumentOf(item: Item): string | undefined {
  const stored = storedMethodId(item.additionalData);
  const shopper =
    item.additionalData?.['tokenization.shopperReference'] ?? item.additionalData?.['recurring.shopperReference'];
  return stored && shopper ? adyenInstrumentToken(shopper, stored) : undefined;
}

async function authorisation(received: Received): Promise<void> {
  const { item } = received;
  const succeeded = item.success === 'true';
  const payment = await paymentOf(item.merchantReference);
  if (!payment) {
    const source = UUID.test(item.merchantReference) ? await findPaymentSource(item.merchantReference) : undefined;
    // A source's authorisation is a zero or small verification amount: its reference binds it.
    if (source) {
      if (!bound(received, source, { reference: item.pspReference })) return;
      return settleSource(source.uuid, item);
    }
    if (UUID.test(item.merchantReference)) return keepEarly(received);
    return;
  }
  // A payment recorded at another provider (a route's other candidate): its money is alarmed, never applied here.
  const held = heldBy(
    payment,
    { provider: 'adyen', account: item.merchantAccountCode, live: received.live },
    succeeded,
    `adyen ${item.eventCode}`,
  );
  if (held === 'unbound') received.unbound = true;
  if (held !== 'held') return;
  // The authorisation is of the whole payment: its amount and currency are the payment's.
  if (
    !bound(received, payment, {
      reference: item.pspReference,
      amountMinor: item.amount.value,
      currency: item.amount.currency,
    })
  )
    return;
  const outcome = succeeded
    ? ({ status: 'succeeded' } as const)
    : ({ status: 'failed', reason: refusalReason(item.reason) } as const);
  const found = { ...outcome, providerReference: item.pspReference, ...tokenOf(item) };
  if (payment.charge_attempt_uuid) {
    if (payment.status === 'failed' && succeeded) return recordRecurringPaidAfterFailure(payment, item.pspReference);
    await settleRecurringFromProvider(payment, async () => found);
    return;
  }
  // Money Adyen took is recorded, also on a payment we had failed, unless we cancelled it
  // (a cancellation outranks the authorisation it cancelled, whichever came first).
  // Nor when its capture failed or it expired uncaptured: the authorisation was never money.
  const cancelled =
    succeeded &&
    ((await getItem(markerKey(fact(item.pspReference, 'cancelled')))) ||
      (await getItem(markerKey(fact(item.pspReference, 'not_captured')))));
  if (succeeded && !cancelled && payment.status === 'cancelled') return capturedAfterCancel(payment.uuid, found);
  await settleFromProvider(payment.uuid, async () => found, { reviveFailed: succeeded && !cancelled });
  // Paid already without the instrument it was to save (the answer that settled it lacked it).
  if (succeeded && found.instrumentToken) await attachLateInstrument(payment.uuid, found.instrumentToken);
}

/**
 * A payment the merchant cancelled (`POST /payments/{uuid}/cancel`) while the donor was paying it
 * (TWINT approved in the app, 3-D Secure completed) and that Adyen authorised anyway. Adyen takes a
 * cancel request and decides it later (its CANCELLATION or TECHNICAL_CANCEL notification says
 * whether it took, https://docs.adyen.com/online-payments/cancel/), and cancels only what is not
 * captured yet, while payments are captured "automatically without a delay, immediately after
 * authorisation" by default (https://docs.adyen.com/online-payments/capture/). So an authorisation
 * with no cancellation of it recorded means the donor paid: the payment is recorded `succeeded`
 * (announced, to be refunded if the merchant still wants), and a person is alerted, as for a
 * failed payment Adyen reports paid.
 */
async function capturedAfterCancel(uuid: string, found: FoundOutcome): Promise<void> {
  await retryOnConflict(async () => {
    const read = await findPayment(uuid);
    if (read?.status !== 'cancelled') return read;
    recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'succeeded_after_failure' });
    logger.error(SUCCEEDED_AFTER_FAILURE, { payment: uuid, failed_for: read.status_reason });
    return settlePending(
      {
        ...read,
        status: 'pending',
        ...(found.providerReference && !read.provider_reference ? { provider_reference: found.providerReference } : {}),
        ...(found.instrumentToken && read.create_payment_source ? { instrument_token: found.instrumentToken } : {}),
      },
      { status: 'succeeded' },
    );
  });
}

function tokenOf(item: Item): { instrumentToken?: string } {
  const token = instrumentOf(item);
  return token ? { instrumentToken: token } : {};
}

async function settleSource(uuid: string, item: Item): Promise<void> {
  await retryOnConflict(async () => {
    const source = await findPaymentSource(uuid);
    if (source?.status !== 'pending') return source;
    const token = instrumentOf(item);
    const withToken = token && !source.instrument_token ? { ...source, instrument_token: token } : source;
    return settlePendingSource(
      withToken,
      item.success === 'true' ? { status: 'succeeded' } : { status: 'failed', reason: refusalReason(item.reason) },
    );
  });
}

/**
 * A cancellation Adyen made: the pending payment fails (`approval_expired` when it waited on the
 * donor, else `cancelled`). A cancellation Adyen refused changes nothing: the authorisation's own
 * notification decides.
 */
async function cancellation(received: Received): Promise<void> {
  const { item } = received;
  if (item.success !== 'true') return cancelRefused(received);
  const payment = await paymentOf(item.merchantReference);
  // A technical cancel by our reference may come without originalReference (its pspReference is
  // the cancel's own): then merchant account, mode and currency bind it.
  if (
    payment &&
    !bound(received, payment, { reference: item.originalReference || undefined, currency: item.amount.currency })
  )
    return;
  await mark(fact(paymentPsp(item), 'cancelled'), item.eventCode);
  if (!payment) return;
  if (payment.status === 'succeeded' && payment.provider === 'adyen') {
    // Cancelled after we recorded it paid (its AUTHORISATION came first, and Adyen had not captured
    // it yet): no money was taken after all. A paid payment never moves back by itself here: a
    // person checks it (the donor has not paid) and refunds or marks it.
    recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'cancelled_after_success' });
    logger.error(CANCELLED_AFTER_SUCCESS, { payment: payment.uuid, psp: paymentPsp(item) });
    return;
  }
  await settleFromProvider(payment.uuid, async (stored) => ({
    status: 'failed',
    // A payment whose answer never came, cancelled by our reference: nothing was charged.
    reason: stored.action
      ? 'approval_expired'
      : stored.status_reason === 'provider_unavailable'
        ? 'provider_unavailable'
        : 'cancelled',
  }));
}

/**
 * A cancel Adyen refused because the payment was captured already is proof of money: Adyen
 * cancels "only before capture" and a captured payment must be refunded instead
 * (https://docs.adyen.com/online-payments/cancel/, https://docs.adyen.com/point-of-sale/host-to-host/cancel:
 * "If the authorization has already been captured, you cannot cancel the payment anymore"). We ask
 * for capture at once (captureDelayHours 0), so a cancel of ours that comes after the donor paid
 * (TWINT approved, 3-D Secure completed, an answer lost) fails exactly so, and Adyen does not
 * send every card's AUTHORISATION again: the payment is recorded succeeded from the failed
 * CANCELLATION or TECHNICAL_CANCEL alone (announced, alarmed like any money on a payment we had
 * cancelled or failed). Adyen documents no wording for the refusal's `reason` (unknowable here):
 * any reason that names the capture counts, anything else (nothing found to cancel) changes nothing.
 */
async function cancelRefused(received: Received): Promise<void> {
  const { item } = received;
  const psp = item.originalReference;
  if (!psp || !/captur/i.test(item.reason ?? '')) return;
  const payment = await paymentOf(item.merchantReference);
  if (!payment) {
    if (UUID.test(item.merchantReference)) return notYet(item);
    return;
  }
  if (payment.provider !== 'adyen') return;
  // The refused cancel names the payment's pspReference and at most its amount, like a refund.
  if (!bound(received, payment, { reference: psp, atMostMinor: item.amount.value, currency: item.amount.currency }))
    return;
  const found = { status: 'succeeded', providerReference: psp } as const;
  if (payment.charge_attempt_uuid) {
    if (payment.status === 'failed') return recordRecurringPaidAfterFailure(payment, psp);
    await settleRecurringFromProvider(payment, async () => found);
    return;
  }
  if (payment.status === 'cancelled') return capturedAfterCancel(payment.uuid, found);
  await settleFromProvider(payment.uuid, async () => found, { reviveFailed: true });
}

/** Logged (ProviderAnomalies, kind capture_failed, alarmed) when money recorded as paid was never taken. */
export const CAPTURE_FAILED = 'Adyen did not capture a payment recorded as paid: it is failed now';

/**
 * CAPTURE_FAILED (the scheme rejected the capture, https://docs.adyen.com/online-payments/capture/failure-reasons)
 * and EXPIRE (the authorisation ran out before it was captured,
 * https://docs.adyen.com/development-resources/webhooks/webhook-types/): the money was never
 * taken, so a payment recorded as succeeded is failed (`capture_failed` /
 * `authorisation_expired`), announced (`svc.payments.payment.failed`) and alarmed, since the
 * charity may have thanked the donor already. Bound like every modification (the payment's
 * pspReference as `originalReference`, its currency, at most its amount).
 */
async function captureFailed(received: Received): Promise<void> {
  const { item } = received;
  if (item.success !== 'true') return;
  const payment = await paymentOf(item.merchantReference);
  if (!payment) {
    if (UUID.test(item.merchantReference)) return notYet(item);
    return;
  }
  if (payment.provider !== 'adyen' || !bound(received, payment, modificationOf(item))) return;
  // Outranks the authorisation, whichever arrives first: a late AUTHORISATION revives nothing.
  await mark(fact(paymentPsp(item), 'not_captured'), item.eventCode);
  const reason = item.eventCode === 'EXPIRE' ? 'authorisation_expired' : 'capture_failed';
  await retryOnConflict(async () => {
    const read = await findPayment(payment.uuid);
    if (read?.status !== 'succeeded') return read;
    recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'capture_failed' });
    logger.error(CAPTURE_FAILED, { payment: read.uuid, psp: paymentPsp(item), event: item.eventCode });
    const next: PaymentRecord = {
      ...read,
      status: 'failed',
      status_reason: reason,
      event_sequence: read.event_sequence + 1,
    };
    return savePaymentVersion(read, { ...next, events: paymentStatusEvents(next) });
  });
}

/**
 * OFFER_CLOSED: a payment that waited on the donor (TWINT, 3-D Secure) expired at Adyen unfinished,
 * "the shopper abandoned the session" (https://docs.adyen.com/development-resources/webhooks/webhook-types/):
 * nothing can be charged under it any more, so the pending payment or source fails
 * (`approval_expired`). Anything already settled stays as it is.
 */
async function offerClosed(received: Received): Promise<void> {
  const { item } = received;
  if (item.success !== 'true') return;
  const payment = await paymentOf(item.merchantReference);
  if (payment) {
    if (!bound(received, payment, { reference: item.pspReference, currency: item.amount.currency })) return;
    if (payment.charge_attempt_uuid) return;
    await settleFromProvider(payment.uuid, async () => ({
      status: 'failed',
      reason: 'approval_expired',
      providerReference: item.pspReference,
    }));
    return;
  }
  if (!UUID.test(item.merchantReference)) return;
  const source = await findPaymentSource(item.merchantReference);
  if (!source || !bound(received, source, { reference: item.pspReference })) return;
  await retryOnConflict(async () => {
    const read = await findPaymentSource(source.uuid);
    if (read?.status !== 'pending') return read;
    return settlePendingSource(read, { status: 'failed', reason: 'approval_expired' });
  });
}

/**
 * REFUND / REFUND_FAILED of a refund, ours or one made in Adyen's Customer Area, CANCEL_OR_REFUND
 * of a refund of the whole payment we sent as a reversal (cancelled before capture or refunded
 * after it: the donor keeps the money either way, so a success is the refund's,
 * https://docs.adyen.com/online-payments/reversal), and
 * REFUNDED_REVERSED ("the refunded amount has been returned to you",
 * https://docs.adyen.com/development-resources/webhooks/webhook-types/), each bound to the
 * payment (its pspReference as `originalReference`, at most its amount and its currency).
 *
 * - Ours name `<payment uuid>:<refund uuid>` as merchantReference.
 * - One made in the Customer Area carries the payment's own merchantReference (Adyen copies the
 *   payment's reference to its modifications when none is given): recorded under a uuid derived
 *   from the refund's pspReference, announced as ours are (issue 45).
 * - A reversal fails the refund it names (by its pspReference, or ours by our reference) and
 *   frees its amount; it outranks the refund it reverses, whichever arrives first (a marker of
 *   the refund's pspReference keeps it). Which pspReference a REFUNDED_REVERSED item carries (the
 *   refund's, or one of its own) is not said in the documents read here: we take the refund's,
 *   and find ours by our reference either way; a reversal of a Customer Area refund with a
 *   pspReference of its own would be logged as naming no refund and left to a person.
 */
async function refunded(received: Received): Promise<void> {
  const { item } = received;
  const [paymentUuid, ownRefund] = item.merchantReference.split(':');
  if (!paymentUuid || !UUID.test(paymentUuid) || (ownRefund !== undefined && !UUID.test(ownRefund))) {
    logger.warn('An Adyen refund names no payment of ours', { psp: item.pspReference });
    return;
  }
  const payment = (await findPayment(paymentUuid)) ?? (await paymentOf(paymentUuid));
  if (!payment) return notYet(item);
  if (!bound(received, payment, modificationOf(item))) return;
  const refundUuid = ownRefund ?? derivedUuid('refund', item.pspReference);
  const reversal = item.eventCode === 'REFUNDED_REVERSED';
  if (reversal && item.success !== 'true') return;
  // The refund a reversal names: ours by our reference, else the one of its pspReference.
  const refund = reversal
    ? (payment.refunds.find((r) => r.uuid === refundUuid) ??
      payment.refunds.find((r) => r.provider_reference === item.pspReference))
    : undefined;
  if (reversal) await mark(fact(refund?.provider_reference ?? item.pspReference, 'refund_reversed'), item.eventCode);
  const reversedBefore = !reversal && (await getItem(markerKey(fact(item.pspReference, 'refund_reversed'))));
  const succeeded =
    (item.eventCode === 'REFUND' || item.eventCode === 'CANCEL_OR_REFUND') &&
    item.success === 'true' &&
    !reversedBefore;
  // Which way a reversal went is said in additionalData (`modification.action`, "cancel" in the
  // CANCEL_OR_REFUND example of Adyen's Webhooks v1 description): the same to us, kept in the log.
  if (item.eventCode === 'CANCEL_OR_REFUND')
    logger.info('Adyen reversed a payment', {
      psp: paymentPsp(item),
      action: item.additionalData?.['modification.action'],
    });
  if (reversal && !refund) {
    logger.warn('An Adyen refund reversal names no refund we hold (yet)', { psp: item.pspReference });
    return;
  }
  await applyProviderRefunds(payment.uuid, [
    {
      uuid: refund?.uuid ?? refundUuid,
      providerReference: refund?.provider_reference ?? item.pspReference,
      // Adyen's minor units in ours (ISK and CLP have two decimals at Adyen, none in ISO 4217).
      amountMinor: refund?.amount_minor ?? fromProviderAmount('adyen', payment.currency, item.amount.value),
      outcome:
        reversal || reversedBefore
          ? { status: 'failed', reason: 'refund_reversed' }
          : succeeded
            ? { status: 'succeeded' }
            : { status: 'failed', reason: item.reason || 'refund_failed' },
    },
  ]);
}

/**
 * A chargeback and what follows it. Adyen's dispute flow: NOTIFICATION_OF_CHARGEBACK (opened),
 * CHARGEBACK (funds taken), CHARGEBACK_REVERSED (won, funds back), SECOND_CHARGEBACK (lost again)
 * (https://docs.adyen.com/risk-management/disputes-api/dispute-notifications/). A reversal outranks
 * the chargeback it reverses, whichever arrives first.
 */
async function chargeback(received: Received): Promise<void> {
  const { item } = received;
  const payment = await paymentOf(item.merchantReference);
  if (!payment) {
    if (UUID.test(item.merchantReference)) return notYet(item);
    return;
  }
  if (!bound(received, payment, modificationOf(item))) return;
  // The dispute is the payment's: named by the payment's pspReference, which a CHARGEBACK gives as
  // originalReference while a CHARGEBACK_REVERSED may come without one (Adyen's examples differ),
  // so the payment's own, when we have it, decides.
  const psp = payment.provider_reference ?? paymentPsp(item);
  // The notice opens a dispute and nothing more: a late copy of it (after the CHARGEBACK that
  // follows it in Adyen's flow) does not move the dispute back to needing a response.
  if (item.eventCode === 'NOTIFICATION_OF_CHARGEBACK' && payment.dispute?.provider_reference === psp) return;
  const reversed = item.eventCode === 'CHARGEBACK_REVERSED';
  if (reversed) await mark(fact(psp, 'chargeback_reversed'), item.eventCode);
  const laterReversal = !reversed && (await getItem(markerKey(fact(psp, 'chargeback_reversed'))));
  const status =
    item.eventCode === 'NOTIFICATION_OF_CHARGEBACK'
      ? 'needs_response'
      : reversed
        ? 'won'
        : item.eventCode === 'SECOND_CHARGEBACK'
          ? 'lost'
          : 'charged_back';
  const funds = item.eventCode === 'NOTIFICATION_OF_CHARGEBACK' ? undefined : reversed ? 'reinstated' : 'withdrawn';
  // The dispute's reason is the chargeback's (the scheme's reason): a reversal's own text
  // ("Chargeback reversed") names it only until the chargeback is known, whichever comes first.
  const known = payment.dispute?.provider_reference === psp ? payment.dispute.reason : undefined;
  await recordDispute(payment.uuid, {
    providerReference: psp,
    status: laterReversal && item.eventCode === 'CHARGEBACK' ? 'won' : status,
    reason: (reversed ? known : undefined) ?? (item.reason || 'chargeback'),
    amountMinor: fromProviderAmount('adyen', payment.currency, item.amount.value),
    funds: laterReversal && item.eventCode === 'CHARGEBACK' ? 'reinstated' : funds,
    // A second chargeback comes after the reversal and reopens the dispute it closed: lost. A
    // returned debit is lost at once (the domain's rule), so its reversal reopens it too: won.
    supersedes: item.eventCode === 'SECOND_CHARGEBACK' || (reversed && payment.payment_method === 'sepa_dd'),
  });
}

/**
 * The instrument Adyen stored, for a payment or source still waiting for it (the answer that
 * would have carried it was lost, or the donor's redirect has not come back yet).
 */
async function recurringContract(received: Received): Promise<void> {
  const { item } = received;
  const token = instrumentOf(item) ?? tokenFromContract(item);
  if (!token || !UUID.test(item.merchantReference)) return;
  // Its pspReference is the stored method's, not the payment's: merchant account and mode bind it.
  const named = (await findPayment(item.merchantReference)) ?? (await findPaymentSource(item.merchantReference));
  if (!named || !bound(received, named, {})) return;
  await retryOnConflict(async () => {
    const payment = await findPayment(item.merchantReference);
    if (payment?.status === 'succeeded') {
      await attachLateInstrument(payment.uuid, token);
      return;
    }
    if (payment) {
      if (payment.status !== 'pending' || !payment.create_payment_source || payment.instrument_token) return;
      await savePaymentVersion(payment, { ...payment, instrument_token: token, events: [] });
      return;
    }
    const source = await findPaymentSource(item.merchantReference);
    if (source?.status === 'pending' && !source.instrument_token)
      await saveSourceVersion(source, { ...source, instrument_token: token });
  });
}

/** RECURRING_CONTRACT names the stored method as its pspReference and the shopper in its data. */
function tokenFromContract(item: Item): string | undefined {
  const shopper = item.additionalData?.shopperReference;
  return shopper ? adyenInstrumentToken(shopper, item.pspReference) : undefined;
}
