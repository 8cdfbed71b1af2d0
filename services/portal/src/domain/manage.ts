import { ConflictError, type Principal, ValidationError } from '@svc/core';
import { searchPayments } from '@svc/payments';
import { localDateOf } from '@svc/schedule';
import {
  cancelSubscription,
  changeTerms,
  type PortalSupporter,
  readSubscriptionAs,
  resumeSubscription,
  type SubscriptionRecord,
  type SubscriptionShape,
  shapedSubscription,
  shapedSubscriptions,
  skipCharge,
  subscriptionsOfSupporter,
  suspendSubscription,
  usePaymentSource,
} from '@svc/subscriptions';
import * as z from 'zod';
import type { PORTAL_FEATURES } from '../repository/settings-repository';

type PortalFeature = (typeof PORTAL_FEATURES)[number];

import { type PortalSettings, settingsOf } from './settings';

/**
 * What a donor does in the portal (contract section 12): each change goes through the
 * subscriptions domain's own operations, as the supporter (`changed_by` supporter/portal), within
 * what the organisation's portal settings allow. Nothing here writes a subscription itself.
 *
 * Dates: a day is `YYYY-MM-DD` in the subscription's time zone, or the Unix seconds of its local
 * midnight exactly as GET shows `next_due_date` (so a value read can be sent back).
 */

/** The signed-in donor: their organisation and supporter record (from the portal session). */
export type PortalDonor = PortalSupporter;

const dayInput = z.union([z.string().max(10), z.number().int().min(0).max(7_258_118_400)]);

export const termsInput = z
  .strictObject({
    amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    cover_fees: z.boolean().optional(),
    recurring_interval: z.string().trim().min(1).max(200).optional(),
    next_due_date: dayInput.optional(),
  })
  .refine((input) => Object.keys(input).length > 0, 'Send amount, cover_fees, recurring_interval or next_due_date');
export const skipInput = z.strictObject({ due_date: dayInput });
export const pauseInput = z.strictObject({ resume_on: dayInput.optional() });
export const cancelInput = z.strictObject({ reason: z.string().max(40), comment: z.string().max(2_000).optional() });

const featureOff = (feature: PortalFeature) =>
  new ConflictError(
    `The organisation does not let donors do this in the portal (${feature})`,
    'error.portal.feature_disabled',
    feature,
  );

/** The organisation's settings, with the portal on (a session outlives a switch-off by nothing). */
async function enabledSettings(donor: PortalDonor): Promise<PortalSettings> {
  const settings = await settingsOf(donor.organisation_uuid);
  if (!settings.enabled) {
    throw new ConflictError('The organisation’s donor portal is not enabled', 'error.portal.disabled', 'enabled');
  }
  return settings;
}

function allow(settings: PortalSettings, feature: PortalFeature): void {
  if (!settings.features[feature]) throw featureOff(feature);
}

/** A day as the subscription's calendar knows it: `YYYY-MM-DD` in its time zone. */
function dayOf(value: string | number, subscription: SubscriptionRecord): string {
  return typeof value === 'number' ? localDateOf(value, subscription.timezone) : value;
}

/** The donor's subscriptions in the session's organisation, each as its API GET shows it. */
export async function donorSubscriptions(donor: PortalDonor): Promise<SubscriptionShape[]> {
  const [, all] = await Promise.all([enabledSettings(donor), subscriptionsOfSupporter(donor.supporter_uuid)]);
  const mine = all.filter((subscription) => subscription.organisation_uuid === donor.organisation_uuid);
  // A new payment method the donor approved meanwhile is taken into use as the list is shown
  // (one that is still pending or failed leaves the subscription as it is).
  const current = await Promise.all(
    mine.map((subscription) =>
      subscription.pending_source_uuid
        ? usePaymentSource(donor, subscription.uuid, subscription.pending_source_uuid).catch(() => subscription)
        : subscription,
    ),
  );
  return shapedSubscriptions(current);
}

export async function donorSubscription(donor: PortalDonor, uuid: string): Promise<SubscriptionShape> {
  await enabledSettings(donor);
  return shapedSubscription(await readSubscriptionAs(donor, uuid));
}

/**
 * The amount, interval and next date, as the organisation allows (min/max, its intervals), and
 * whether the donor covers the fees: their own free choice (EU law forbids a surcharge on consumer
 * cards and SEPA debits, so it is never the organisation's to impose or to lock), turned on or off
 * whatever the portal's features say; on needs fees on the payment method's profile (400).
 */
export async function changeDonorTerms(
  donor: PortalDonor,
  uuid: string,
  input: z.infer<typeof termsInput>,
): Promise<SubscriptionShape> {
  const settings = await enabledSettings(donor);
  if (input.amount !== undefined) {
    allow(settings, 'amount');
    if (settings.min_amount !== null && input.amount < settings.min_amount) {
      throw ValidationError.field('amount', 'error.validation.not_valid', `At least ${settings.min_amount}`);
    }
    if (settings.max_amount !== null && input.amount > settings.max_amount) {
      throw ValidationError.field('amount', 'error.validation.not_valid', `At most ${settings.max_amount}`);
    }
  }
  if (input.recurring_interval !== undefined) {
    allow(settings, 'interval');
    if (!settings.intervals.includes(input.recurring_interval)) {
      throw ValidationError.field(
        'recurring_interval',
        'error.validation.not_valid',
        `One of ${settings.intervals.join(', ')}`,
      );
    }
  }
  if (input.next_due_date !== undefined) allow(settings, 'next_date');
  const current = await readSubscriptionAs(donor, uuid);
  const changed = await changeTerms(donor, uuid, {
    ...(input.amount === undefined ? {} : { amount: input.amount }),
    ...(input.cover_fees === undefined ? {} : { cover_fees: input.cover_fees }),
    ...(input.recurring_interval === undefined ? {} : { recurring_interval: input.recurring_interval }),
    ...(input.next_due_date === undefined ? {} : { next_due_date: dayOf(input.next_due_date, current) }),
  });
  return shapedSubscription(changed);
}

export async function skipDonorCharge(
  donor: PortalDonor,
  uuid: string,
  input: z.infer<typeof skipInput>,
): Promise<SubscriptionShape> {
  allow(await enabledSettings(donor), 'skip');
  const current = await readSubscriptionAs(donor, uuid);
  return shapedSubscription(await skipCharge(donor, uuid, dayOf(input.due_date, current)));
}

/** Pause from today, until `resume_on` (billing resumes that day) or until the donor resumes. */
export async function pauseDonorSubscription(
  donor: PortalDonor,
  uuid: string,
  input: z.infer<typeof pauseInput>,
): Promise<SubscriptionShape> {
  allow(await enabledSettings(donor), 'pause');
  const current = await readSubscriptionAs(donor, uuid);
  const end = input.resume_on === undefined ? undefined : dayOf(input.resume_on, current);
  const paused = await suspendSubscription(donor, uuid, end === undefined ? {} : { suspension_end: end });
  return shapedSubscription(paused);
}

export async function resumeDonorSubscription(donor: PortalDonor, uuid: string): Promise<SubscriptionShape> {
  allow(await enabledSettings(donor), 'pause');
  return shapedSubscription(await resumeSubscription(donor, uuid));
}

export async function cancelDonorSubscription(
  donor: PortalDonor,
  uuid: string,
  input: z.infer<typeof cancelInput>,
): Promise<SubscriptionShape> {
  const settings = await enabledSettings(donor);
  allow(settings, 'cancel');
  if (!settings.cancel_reasons.includes(input.reason)) {
    throw ValidationError.field('reason', 'error.validation.not_valid', `One of ${settings.cancel_reasons.join(', ')}`);
  }
  const reason = { reason: input.reason, ...(input.comment?.trim() ? { comment: input.comment.trim() } : {}) };
  return shapedSubscription(await cancelSubscription(donor, uuid, reason));
}

/** The largest year a donor may ask for, and the first: outside them, there are no gifts. */
const YEARS = { first: 2000, last: 2199 } as const;
export const paymentsQuery = z.strictObject({ year: z.coerce.number().int().min(YEARS.first).max(YEARS.last) });

/** At most this many gifts in one year's list (a weekly donor gives 53; the rest is a page away). */
const YEAR_PAGE = 500;

/**
 * The donor's gifts of a year (by when each was made, UTC), newest first, each as the payments
 * API shows it: searched in the organisation, on the supporter's uuid.
 */
export async function donorPayments(donor: PortalDonor, year: number) {
  await enabledSettings(donor);
  const from = Date.UTC(year, 0, 1) / 1000;
  const to = Date.UTC(year + 1, 0, 1) / 1000;
  // The search is scoped as an API caller with a grant on the donor's organisation alone.
  const scope: Principal = {
    clientId: `portal:${donor.supporter_uuid}`,
    role: 'customer',
    kind: 'client',
    grants: [{ organisation_uuid: donor.organisation_uuid }],
  };
  const result = await searchPayments(Promise.resolve(scope), {
    query: {
      $and: [{ $term: { supporter_uuid: donor.supporter_uuid } }, { $range: { created: { gte: from, lt: to } } }],
    },
    sort: [{ field: 'created', field_type: 'numeric', direction: 'desc' }],
    size: YEAR_PAGE,
  });
  return { year, payments: result.hits };
}
