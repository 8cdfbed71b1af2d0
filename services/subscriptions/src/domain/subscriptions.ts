import {
  amountRefusal,
  assertAccountGrant,
  ConflictError,
  deferred,
  definedFields,
  feeCoverAt,
  flatStringObject,
  freeJsonObject,
  isoExponent,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  onAccount,
  type Principal,
  readFor,
  uuidSchema,
  ValidationError,
} from '@svc/core';
import { type ChangedBy, type EventName, newEvent } from '@svc/events';
import { findAccount, type ProfileFees } from '@svc/organisations';
import { feesOfSource, findPaymentSource, type PaymentSourceRecord } from '@svc/payments';
import { dueAfter, dueOnOrAfter, localMidnight, resolveTimezone } from '@svc/schedule';
import { findSupporter } from '@svc/supporters';
import { retryOnConflict, transactWrite, versioned } from '@svc/table';
import * as z from 'zod';
import type { SubscriptionRecord } from '../repository/records';
import { statusAt, suspendedAt, type VisibleStatus } from '../repository/state';
import { findSubscription, subscriptionPut } from '../repository/subscription-repository';
import { checkPlannedDates, dateOrThrow, intervalOrThrow, nextDueFrom, shownNextDueDay, today } from './calendar';
import { resolvePlan } from './plans';

// The inputs are `deferred` (built at their first parse, not at the function's cold start).
const stringParameters = () => flatStringObject({ maxKeys: 256, maxKeyLength: 100, maxValueLength: 1000 });
const svcParameters = () => freeJsonObject({ maxKeyLength: 100 });
const localDateText = () => z.string().max(10);

const subscriptionFields = () => ({
  supporter_uuid: uuidSchema,
  subscription_plan_uuid: uuidSchema,
  payment_source_uuid: uuidSchema,
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  cover_fees: z.boolean(),
  timezone: z.string().max(100),
  recurring_interval: z.string().trim().min(1, 'This value should not be blank').max(200),
  planned_effective_from: localDateText(),
  planned_end: localDateText(),
  custom_parameters: stringParameters(),
  svc_parameters: svcParameters(),
});

export const createSubscriptionInput = deferred(() => {
  const fields = subscriptionFields();
  return z
    .object({
      ...fields,
      account_uuid: uuidSchema,
      currency: z
        .string()
        .regex(/^[A-Z]{3}$/, { message: 'An upper-case ISO 4217 code', abort: true })
        .refine((code) => isoExponent(code) !== undefined, 'An active ISO 4217 currency with minor units'),
      test_mode: z.boolean().optional(),
      cover_fees: fields.cover_fees.optional(),
      status: z.enum(['active', 'pending']).optional(),
      subscription_plan_uuid: fields.subscription_plan_uuid.optional(),
      timezone: fields.timezone.optional(),
      planned_effective_from: localDateText().optional(),
      planned_end: localDateText().optional(),
      custom_parameters: stringParameters().optional(),
      svc_parameters: svcParameters().optional(),
    })
    .strict();
});
export type CreateSubscriptionInput = z.infer<typeof createSubscriptionInput>;

export const updateSubscriptionInput = deferred(() => z.object(subscriptionFields()).partial().strict());
export type UpdateSubscriptionInput = z.infer<typeof updateSubscriptionInput>;

export const suspendInput = deferred(() =>
  z.object({ suspension_start: localDateText().optional(), suspension_end: localDateText().optional() }).strict(),
);

const conflict = (message: string) => new ConflictError(message, 'error.subscription.invalid_state');

/** Who made a change, as its event says (`data.changed_by`, contract section 12). */
export const BY_API: ChangedBy = { actor: 'organisation', channel: 'api' };
export const BY_BILLING: ChangedBy = { actor: 'system', channel: 'billing' };
export const BY_PORTAL: ChangedBy = { actor: 'supporter', channel: 'portal' };

/**
 * Who acts on a subscription: an API caller (its grants are checked against the subscription's
 * account) or a supporter signed in to the portal (the subscription must be theirs, in the
 * organisation of their session). Both go through the same rules below.
 */
export type SubscriptionActor = Promise<Principal> | PortalSupporter;
export interface PortalSupporter {
  readonly organisation_uuid: string;
  readonly supporter_uuid: string;
}

const isSupporter = (actor: SubscriptionActor): actor is PortalSupporter => !(actor instanceof Promise);

export function changedByOf(actor: SubscriptionActor): ChangedBy {
  return isSupporter(actor) ? BY_PORTAL : BY_API;
}

export function subscriptionEvent(subscription: SubscriptionRecord, name: EventName, changedBy: ChangedBy) {
  subscription.event_sequence += 1;
  return newEvent({
    name,
    object: 'subscription',
    object_uuid: subscription.uuid,
    organisation_uuid: subscription.organisation_uuid,
    account_uuid: subscription.account_uuid,
    sequence: subscription.event_sequence,
    changed_by: changedBy,
  });
}

/** The subscription, if the caller has a grant on its account. */
export async function readSubscription(principal: Promise<Principal>, uuid: string): Promise<SubscriptionRecord> {
  return readFor(principal, findSubscription(uuid), 'Subscription not found', onAccount);
}

/**
 * The subscription as the actor may see it: through the caller's grants, or the supporter's own
 * in the session's organisation. Anyone else's is "not found" (never "forbidden": the portal
 * does not confirm that a uuid exists).
 */
export async function readSubscriptionAs(actor: SubscriptionActor, uuid: string): Promise<SubscriptionRecord> {
  if (!isSupporter(actor)) return readSubscription(actor, uuid);
  const subscription = await findSubscription(uuid);
  if (
    !subscription ||
    subscription.organisation_uuid !== actor.organisation_uuid ||
    subscription.supporter_uuid !== actor.supporter_uuid
  ) {
    throw new NotFoundError('Subscription not found');
  }
  return subscription;
}

async function usableSource(uuid: string, accountUuid: string, testMode: boolean): Promise<PaymentSourceRecord> {
  const source = await findPaymentSource(uuid);
  if (!source || source.account_uuid !== accountUuid) {
    throw ValidationError.field(
      'payment_source_uuid',
      'error.validation.not_valid',
      'No such payment source on this account',
    );
  }
  if (source.status !== 'active' || !source.instrument_token) {
    throw ValidationError.field(
      'payment_source_uuid',
      'error.validation.not_valid',
      'This payment source cannot be charged',
    );
  }
  if (source.test_mode !== testMode) {
    throw ValidationError.field(
      'test_mode',
      'error.validation.not_valid',
      `test_mode must match the payment source's test_mode (${source.test_mode})`,
    );
  }
  return source;
}

/**
 * A subscription's amount is charged by its source's provider in that provider's minor units:
 * one it cannot take exactly (Stripe's KWD in tens of fils, Adyen's IDR in whole rupiah,
 * @svc/core currencies.ts) is refused now, not failed at every due date. With the fees covered,
 * what is charged is the total covering the source's `fees`, rounded up to what the provider takes.
 */
function checkAmountAtProvider(
  subscription: Pick<SubscriptionRecord, 'payment_provider' | 'currency' | 'amount' | 'cover_fees'>,
  fees: ProfileFees | undefined,
) {
  const { payment_provider: provider, currency, amount } = subscription;
  let refusal: string | undefined;
  try {
    const charged = feeCoverAt(provider, currency, amount, subscription.cover_fees ? fees : undefined).total;
    refusal = amountRefusal(provider, currency, charged);
  } catch (error) {
    // A total past the safe integers (a percentage near 100 on a huge amount).
    if (!(error instanceof RangeError)) throw error;
    refusal = error.message;
  }
  if (refusal) throw ValidationError.field('amount', 'error.validation.not_valid', refusal);
}

/** The fees the subscription's charges cover, if it covers them: its source's (feesOfSource). */
async function coveredFees(subscription: Pick<SubscriptionRecord, 'cover_fees' | 'payment_source_uuid'>) {
  if (!subscription.cover_fees) return undefined;
  const source = await findPaymentSource(subscription.payment_source_uuid);
  return source ? feesOfSource(source) : undefined;
}

/**
 * The donor covers the fees (`cover_fees`: their free choice, on or off at any time): turning it
 * on needs fees on the source's profile (400 on `cover_fees` otherwise). A source changed later
 * to one without fees keeps the choice and covers nothing until there are fees to cover.
 */
async function setCoverFees(
  subscription: SubscriptionRecord,
  cover: boolean,
  source?: PaymentSourceRecord,
): Promise<ProfileFees | undefined> {
  if (!cover) {
    delete subscription.cover_fees;
    return undefined;
  }
  const holder = source ?? (await findPaymentSource(subscription.payment_source_uuid));
  const fees = holder ? await feesOfSource(holder) : undefined;
  if (!fees) {
    throw ValidationError.field(
      'cover_fees',
      'error.validation.not_valid',
      'The subscription’s payment method has no fees to cover (no fees on its profile)',
    );
  }
  subscription.cover_fees = true;
  return fees;
}

async function checkSupporter(uuid: string, organisationUuid: string): Promise<void> {
  const supporter = await findSupporter(uuid);
  if (!supporter || supporter.organisation_uuid !== organisationUuid) {
    throw ValidationError.field(
      'supporter_uuid',
      'error.validation.not_valid',
      'No such supporter in this organisation',
    );
  }
}

/** Starts billing: the anchor (the first due day of keyword intervals) and the next due day. */
function startBilling(subscription: SubscriptionRecord, at: number): void {
  const day = today(subscription, at);
  const from = subscription.planned_effective_from;
  subscription.status = 'active';
  subscription.anchor = from ?? day;
  subscription.planned_since = Math.max(at, from === undefined ? at : localMidnight(from, subscription.timezone));
  setNextDue(subscription, at);
}

function setNextDue(subscription: SubscriptionRecord, at: number): void {
  const next = nextDueFrom(subscription, at);
  if (next === undefined) delete subscription.next_due_day;
  else subscription.next_due_day = next;
}

export interface NewSubscription {
  input: Omit<CreateSubscriptionInput, 'supporter_uuid'> & { supporter_uuid?: string };
  organisationUuid: string;
  source: PaymentSourceRecord;
  planUuid: string;
  /** The period the creating payment already paid (subscriptions made with a payment). */
  paidPeriod?: boolean;
  /** The source's fees (feesOfSource), where the subscription covers them. */
  fees?: ProfileFees | undefined;
}

/** Builds a subscription record (validated, billing started when active) without writing it. */
export function buildSubscription(options: NewSubscription): SubscriptionRecord {
  const { input, source } = options;
  intervalOrThrow(input.recurring_interval);
  const at = now();
  const subscription: SubscriptionRecord = {
    uuid: newResourceUuid('subscription'),
    organisation_uuid: options.organisationUuid,
    account_uuid: input.account_uuid,
    ...definedFields({ supporter_uuid: input.supporter_uuid }),
    plan_uuid: options.planUuid,
    payment_source_uuid: source.uuid,
    payment_provider: source.provider,
    payment_method: source.payment_method,
    created: at,
    updated: at,
    currency: input.currency,
    amount: input.amount,
    ...(input.cover_fees ? { cover_fees: true } : {}),
    timezone: resolveTimezone(input.timezone),
    recurring_interval: input.recurring_interval,
    status: 'pending',
    ...(input.planned_effective_from === undefined
      ? {}
      : { planned_effective_from: dateOrThrow(input.planned_effective_from, 'planned_effective_from') }),
    ...(input.planned_end === undefined ? {} : { planned_end: dateOrThrow(input.planned_end, 'planned_end') }),
    consecutive_failed_invoices: 0,
    test_mode: input.test_mode ?? false,
    custom_parameters: input.custom_parameters ?? {},
    svc_parameters: input.svc_parameters ?? {},
    version: 1,
    event_sequence: 0,
    events: [],
  };
  checkPlannedDates(subscription.timezone, subscription.planned_effective_from, subscription.planned_end, at);
  checkAmountAtProvider(subscription, options.fees);
  // The payment that starts a subscription pays the current period, unless billing starts later.
  const day = today(subscription, at);
  if (options.paidPeriod && (subscription.planned_effective_from ?? day) <= day) subscription.last_period = day;
  if ((input.status ?? 'pending') === 'active') startBilling(subscription, at);
  subscription.events = [subscriptionEvent(subscription, 'svc.subscriptions.subscription.created', BY_API)];
  return subscription;
}

export async function createSubscription(
  principal: Promise<Principal>,
  input: CreateSubscriptionInput,
): Promise<SubscriptionRecord> {
  const [caller, account] = await Promise.all([principal, findAccount(input.account_uuid)]);
  if (!account) throw new NotFoundError('Account not found');
  assertAccountGrant(caller, account.organisation_uuid, account.uuid);
  const [source, plan] = await Promise.all([
    usableSource(input.payment_source_uuid, account.uuid, input.test_mode ?? false),
    resolvePlan(account.organisation_uuid, account.uuid, input.subscription_plan_uuid),
    checkSupporter(input.supporter_uuid, account.organisation_uuid),
  ]);
  const fees = input.cover_fees ? await feesOfSource(source) : undefined;
  if (input.cover_fees && !fees) {
    throw ValidationError.field(
      'cover_fees',
      'error.validation.not_valid',
      'The payment source’s profile has no fees to cover',
    );
  }
  const subscription = buildSubscription({
    input,
    organisationUuid: account.organisation_uuid,
    source,
    planUuid: plan.uuid,
    fees,
  });
  // A re-run of a request that died after storing the subscription returns that subscription.
  const earlier = isResumedRequest() ? await findSubscription(subscription.uuid) : undefined;
  if (earlier) return earlier;
  await transactWrite([{ item: subscriptionPut(subscription) }]);
  return subscription;
}

/** One guarded change: read, check against the current state, write with the version read. */
async function change(
  actor: SubscriptionActor,
  uuid: string,
  apply: (subscription: SubscriptionRecord, status: VisibleStatus, at: number) => Promise<void> | void,
): Promise<SubscriptionRecord> {
  // A principal is awaited once; the retries read the subscription again with the same caller.
  const who: SubscriptionActor = isSupporter(actor) ? actor : Promise.resolve(await actor);
  return retryOnConflict(async () => {
    const read = await readSubscriptionAs(who, uuid);
    const at = now();
    const next: SubscriptionRecord = structuredClone({ ...read, events: [] });
    await apply(next, statusAt(read, at), at);
    next.updated = at;
    next.version = read.version + 1;
    await transactWrite([versioned(subscriptionPut(next, read.version))]);
    return next;
  });
}

/** What an `updated` event announces: a change of the subscription's terms, not of its bookkeeping. */
const TERMS = [
  'amount',
  'cover_fees',
  'recurring_interval',
  'timezone',
  'anchor',
  'next_due_day',
  'planned_effective_from',
  'planned_end',
  'payment_source_uuid',
  'plan_uuid',
  'supporter_uuid',
  'custom_parameters',
  'svc_parameters',
] as const;

function announceUpdate(before: SubscriptionRecord, after: SubscriptionRecord, changedBy: ChangedBy): void {
  const changed = TERMS.some((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
  if (changed) {
    after.events = [...after.events, subscriptionEvent(after, 'svc.subscriptions.subscription.updated', changedBy)];
  }
}

export function updateSubscription(principal: Promise<Principal>, uuid: string, input: UpdateSubscriptionInput) {
  return change(principal, uuid, async (subscription, status, at) => {
    const before = structuredClone(subscription);
    if (status === 'cancelled' || status === 'finished') throw conflict(`A ${status} subscription cannot be changed`);
    if (input.supporter_uuid !== undefined && input.supporter_uuid !== subscription.supporter_uuid) {
      if (subscription.supporter_uuid !== undefined) {
        throw new ConflictError(
          'The supporter of a subscription can be set only while it is unset',
          'error.subscription.supporter_already_set',
          'supporter_uuid',
        );
      }
      await checkSupporter(input.supporter_uuid, subscription.organisation_uuid);
      subscription.supporter_uuid = input.supporter_uuid;
    }
    if (input.subscription_plan_uuid !== undefined) {
      const plan = await resolvePlan(
        subscription.organisation_uuid,
        subscription.account_uuid,
        input.subscription_plan_uuid,
      );
      subscription.plan_uuid = plan.uuid;
    }
    if (input.payment_source_uuid !== undefined) {
      const source = await usableSource(input.payment_source_uuid, subscription.account_uuid, subscription.test_mode);
      subscription.payment_source_uuid = source.uuid;
      subscription.payment_provider = source.provider;
      subscription.payment_method = source.payment_method;
    }
    if (input.amount !== undefined) subscription.amount = input.amount;
    if (input.cover_fees !== undefined) await setCoverFees(subscription, input.cover_fees);
    if (input.amount !== undefined || input.payment_source_uuid !== undefined || input.cover_fees !== undefined) {
      checkAmountAtProvider(subscription, await coveredFees(subscription));
    }
    if (input.custom_parameters !== undefined) subscription.custom_parameters = input.custom_parameters;
    if (input.svc_parameters !== undefined) subscription.svc_parameters = input.svc_parameters;
    const reschedule =
      input.timezone !== undefined ||
      input.recurring_interval !== undefined ||
      input.planned_effective_from !== undefined ||
      input.planned_end !== undefined;
    if (input.timezone !== undefined) subscription.timezone = resolveTimezone(input.timezone);
    if (input.recurring_interval !== undefined) {
      intervalOrThrow(input.recurring_interval);
      subscription.recurring_interval = input.recurring_interval;
    }
    if (input.planned_effective_from !== undefined) {
      const from = dateOrThrow(input.planned_effective_from, 'planned_effective_from');
      checkPlannedDates(subscription.timezone, from, undefined, at);
      subscription.planned_effective_from = from;
      if (subscription.status === 'active') {
        subscription.anchor = from;
        subscription.planned_since = localMidnight(from, subscription.timezone);
      }
    }
    if (input.planned_end !== undefined) {
      subscription.planned_end = dateOrThrow(input.planned_end, 'planned_end');
      checkPlannedDates(subscription.timezone, undefined, subscription.planned_end, at);
      const from = subscription.planned_effective_from;
      if (from !== undefined && subscription.planned_end <= from) {
        throw ValidationError.field(
          'planned_end',
          'error.validation.not_valid',
          'planned_end must be after planned_effective_from',
        );
      }
    }
    if (reschedule && subscription.status === 'active') setNextDue(subscription, at);
    announceUpdate(before, subscription, BY_API);
  });
}

export function activateSubscription(actor: SubscriptionActor, uuid: string) {
  return change(actor, uuid, (subscription, status, at) => {
    if (status !== 'pending' && status !== 'suspended') throw conflict(`A ${status} subscription cannot be activated`);
    if (status === 'suspended') {
      delete subscription.suspension_start;
      delete subscription.suspension_end;
      // A fresh start: dunning's count does not carry over into the reactivated subscription.
      subscription.consecutive_failed_invoices = 0;
      setNextDue(subscription, at);
    } else {
      startBilling(subscription, at);
    }
    subscription.events = [
      subscriptionEvent(subscription, 'svc.subscriptions.subscription.activated', changedByOf(actor)),
    ];
  });
}

/** Why a supporter cancelled (the portal: a code from the organisation's list, and a comment). */
export interface CancelReason {
  reason: string;
  comment?: string;
}

export function cancelSubscription(actor: SubscriptionActor, uuid: string, why?: CancelReason) {
  return change(actor, uuid, (subscription, status, at) => {
    if (status !== 'pending' && status !== 'active' && status !== 'suspended') {
      throw conflict(`A ${status} subscription cannot be cancelled`);
    }
    if (why) {
      subscription.cancel_reason = why.reason;
      if (why.comment !== undefined) subscription.cancel_comment = why.comment;
    }
    cancelNow(subscription, at, changedByOf(actor));
  });
}

/** Cancels from any live state (the API, the portal, or dunning at the plan's limit). */
export function cancelNow(subscription: SubscriptionRecord, at: number, changedBy: ChangedBy = BY_BILLING): void {
  subscription.status = 'cancelled';
  subscription.ended_at = at;
  delete subscription.next_due_day;
  subscription.events = [
    ...subscription.events,
    subscriptionEvent(subscription, 'svc.subscriptions.subscription.cancelled', changedBy),
  ];
}

/** Suspends from today with no end (dunning at the plan's limit, when it says suspend). */
export function suspendIndefinitely(subscription: SubscriptionRecord, at: number): void {
  subscription.suspension_start = today(subscription, at);
  delete subscription.suspension_end;
  subscription.events = [
    ...subscription.events,
    subscriptionEvent(subscription, 'svc.subscriptions.subscription.suspended', BY_BILLING),
  ];
}

/**
 * Suspend: creates a suspension, or modifies the one in force. A
 * new one starts on `suspension_start` (today or later; today when omitted); one already in force
 * keeps its start and takes the new end. No end means indefinite; the end day resumes billing.
 */
export function suspendSubscription(
  actor: SubscriptionActor,
  uuid: string,
  input: z.infer<typeof suspendInput> | undefined,
) {
  return change(actor, uuid, (subscription, status, at) => {
    if (status !== 'active' && status !== 'suspended') throw conflict(`A ${status} subscription cannot be suspended`);
    const day = today(subscription, at);
    const end = input?.suspension_end === undefined ? undefined : dateOrThrow(input.suspension_end, 'suspension_end');
    const inForce = suspendedAt(subscription, at);
    if (inForce && input?.suspension_start !== undefined) {
      throw ValidationError.field(
        'suspension_start',
        'error.validation.not_valid',
        'A suspension already in force keeps its start; send only suspension_end',
      );
    }
    const start = inForce
      ? (subscription.suspension_start ?? day)
      : input?.suspension_start === undefined
        ? day
        : dateOrThrow(input.suspension_start, 'suspension_start');
    if (!inForce && start < day) {
      throw ValidationError.field(
        'suspension_start',
        'error.validation.not_valid',
        'suspension_start must be today or later',
      );
    }
    if (end !== undefined && (end <= start || end <= day)) {
      throw ValidationError.field(
        'suspension_end',
        'error.validation.not_valid',
        'suspension_end must be after suspension_start and after today',
      );
    }
    subscription.suspension_start = start;
    if (end === undefined) delete subscription.suspension_end;
    else subscription.suspension_end = end;
    if (!inForce) {
      subscription.events = [
        subscriptionEvent(subscription, 'svc.subscriptions.subscription.suspended', changedByOf(actor)),
      ];
    }
  });
}

/**
 * What a donor may change of their own subscription (the portal's PATCH; contract section 12):
 * the amount, the interval and the next charge date, each from the next charge on, with no
 * proration. The organisation's limits (min/max, the allowed intervals) are the portal's to check;
 * the rules here are the API's own.
 */
export interface TermsChange {
  amount?: number;
  /** The donor covers the fees of each charge from the next one on (their free choice). */
  cover_fees?: boolean;
  recurring_interval?: string;
  /** The next charge's day (YYYY-MM-DD in the subscription's time zone). */
  next_due_date?: string;
}

export function changeTerms(actor: SubscriptionActor, uuid: string, input: TermsChange) {
  return change(actor, uuid, async (subscription, status, at) => {
    if (status !== 'active' && status !== 'suspended') throw conflict(`A ${status} subscription cannot be changed`);
    const before = structuredClone(subscription);
    if (input.amount !== undefined) subscription.amount = input.amount;
    if (input.cover_fees !== undefined) await setCoverFees(subscription, input.cover_fees);
    if (input.amount !== undefined || input.cover_fees !== undefined) {
      checkAmountAtProvider(subscription, await coveredFees(subscription));
    }
    if (input.recurring_interval !== undefined) {
      intervalOrThrow(input.recurring_interval);
      subscription.recurring_interval = input.recurring_interval;
      setNextDue(subscription, at);
    }
    if (input.next_due_date !== undefined) moveNextCharge(subscription, input.next_due_date, at);
    announceUpdate(before, subscription, changedByOf(actor));
  });
}

/**
 * Moves the next charge to `text`, and the billing grid with it (the anchor): after today and
 * after the last charged period, before the charge that follows the current next one (so no
 * charge is skipped by moving: that is `skip`), and a day the interval can fall on from itself
 * (a fixed-day interval such as `15 * *` cannot be moved).
 */
function moveNextCharge(subscription: SubscriptionRecord, text: string, at: number): void {
  const day = dateOrThrow(text, 'next_due_date');
  const refuse = (message: string) => {
    throw ValidationError.field('next_due_date', 'error.validation.not_valid', message);
  };
  if (day <= today(subscription, at)) refuse('next_due_date must be after today');
  if (subscription.last_period !== undefined && day <= subscription.last_period) {
    refuse('next_due_date must be after the last charged period');
  }
  if (subscription.planned_end !== undefined && day >= subscription.planned_end) {
    refuse('next_due_date must be before planned_end');
  }
  const interval = intervalOrThrow(subscription.recurring_interval);
  if (dueOnOrAfter(interval, day, day) !== day) refuse('This interval charges on fixed days; the date cannot be moved');
  const current = subscription.next_due_day;
  const following = current === undefined ? undefined : dueAfter(interval, subscription.anchor ?? current, current);
  if (following !== undefined && day >= following) {
    refuse(`next_due_date must be before ${following}, the charge after the next one (skip a charge instead)`);
  }
  subscription.anchor = day;
  subscription.next_due_day = day;
}

/**
 * Skips one charge: `due_date` must be the next charge as GET shows it (while active, not
 * suspended). The period counts as done without an invoice, and the next charge is the one after.
 */
export function skipCharge(actor: SubscriptionActor, uuid: string, dueDate: string) {
  return change(actor, uuid, (subscription, status, at) => {
    if (status !== 'active') throw conflict(`A ${status} subscription has no charge to skip`);
    const day = dateOrThrow(dueDate, 'due_date');
    if (subscription.next_due_day === undefined || day !== shownNextDueDay(subscription)) {
      throw ValidationError.field(
        'due_date',
        'error.validation.not_valid',
        `due_date must be the next charge${subscription.next_due_day ? ` (${shownNextDueDay(subscription)})` : ''}`,
      );
    }
    const before = structuredClone(subscription);
    subscription.last_period = day;
    setNextDue(subscription, at);
    announceUpdate(before, subscription, changedByOf(actor));
  });
}

/** Resumes a suspended subscription now (the portal's resume): as activation, the grid kept. */
export async function resumeSubscription(actor: SubscriptionActor, uuid: string) {
  const current = await readSubscriptionAs(actor, uuid);
  if (statusAt(current, now()) !== 'suspended') throw conflict('Only a suspended subscription can be resumed');
  return activateSubscription(actor, uuid);
}

/**
 * Moves the subscription to another saved source of its account (the portal's payment-method
 * change). An active source is used from the next charge; one still waiting for the donor or the
 * provider (a 3-D Secure redirect, a mandate being set up) is kept as `pending_source_uuid` and
 * the current source stays in use until the new one is active: the same call again, once it is,
 * makes the switch (the portal calls it when the donor returns and when the subscription is
 * shown). A source that failed is dropped and refused.
 */
export function usePaymentSource(actor: SubscriptionActor, uuid: string, sourceUuid: string) {
  return change(actor, uuid, async (subscription, status) => {
    if (status === 'cancelled' || status === 'finished') throw conflict(`A ${status} subscription cannot be changed`);
    const source = await findPaymentSource(sourceUuid);
    if (!source || source.account_uuid !== subscription.account_uuid || source.test_mode !== subscription.test_mode) {
      throw ValidationError.field('payment_source_uuid', 'error.validation.not_valid', 'No such payment source');
    }
    if (source.status === 'pending') {
      subscription.pending_source_uuid = source.uuid;
      return;
    }
    const wasPending = subscription.pending_source_uuid === source.uuid;
    if (wasPending) delete subscription.pending_source_uuid;
    const usable = source.status === 'active' && source.instrument_token !== undefined;
    // The pending one failed: forgotten (written), the current source stays; the caller sees why on the source.
    if (!usable && wasPending) return;
    if (!usable) {
      throw ValidationError.field(
        'payment_source_uuid',
        'error.validation.not_valid',
        'This payment source cannot be charged',
      );
    }
    const before = structuredClone(subscription);
    subscription.payment_source_uuid = source.uuid;
    subscription.payment_provider = source.provider;
    subscription.payment_method = source.payment_method;
    checkAmountAtProvider(subscription, subscription.cover_fees ? await feesOfSource(source) : undefined);
    announceUpdate(before, subscription, changedByOf(actor));
  });
}
