import { addDays, dueAtLeastMonthsApart, localMidnight, parseInterval } from '@svc/schedule';
import type { SubscriptionRecord } from './records';

export type VisibleStatus = 'pending' | 'active' | 'suspended' | 'cancelled' | 'finished';

const midnight = (subscription: SubscriptionRecord, day: string) => localMidnight(day, subscription.timezone);

/** True while a suspension is in force at `at` (its start reached, its end not yet). */
export function suspendedAt(subscription: SubscriptionRecord, at: number): boolean {
  if (subscription.suspension_start === undefined) return false;
  if (at < midnight(subscription, subscription.suspension_start)) return false;
  return subscription.suspension_end === undefined || at < midnight(subscription, subscription.suspension_end);
}

export function endedAt(subscription: SubscriptionRecord, at: number): boolean {
  return subscription.planned_end !== undefined && at >= midnight(subscription, subscription.planned_end);
}

/**
 * The status as the API shows it at `at`. Time moves some subscriptions on without a write: a
 * suspension starts and ends on its days and a subscription finishes at its planned end, so the
 * status is derived from the stored one and the clock (the billing worker stores `finished`).
 */
export function statusAt(subscription: SubscriptionRecord, at: number): VisibleStatus {
  if (subscription.status === 'cancelled' || subscription.status === 'finished') return subscription.status;
  if (endedAt(subscription, at)) return 'finished';
  if (subscription.status === 'active' && suspendedAt(subscription, at)) return 'suspended';
  return subscription.status;
}

/**
 * When the billing run next has to look at the subscription (its due-index time), or undefined
 * when nothing will happen without a call: pending, cancelled, finished, or suspended with no end.
 * The planned end counts too, so the worker stores `finished` on time.
 */
export function billableFrom(subscription: SubscriptionRecord): number | undefined {
  if (subscription.status !== 'active') return undefined;
  const end = subscription.planned_end === undefined ? undefined : midnight(subscription, subscription.planned_end);
  const due = subscription.next_due_day === undefined ? undefined : midnight(subscription, subscription.next_due_day);
  if (due === undefined) return end;
  if (subscription.suspension_start !== undefined && subscription.suspension_end === undefined) {
    if (due >= midnight(subscription, subscription.suspension_start)) return end;
  }
  return end === undefined ? due : Math.min(due, end);
}

/**
 * Charge reminders (contract section 12): a subscription charged every REMINDER_MIN_MONTHS months
 * or less often hears of each charge REMINDER_DAYS_BEFORE days ahead, at local midnight in its
 * time zone, once per due day (`reminded_for`).
 */
export const REMINDER_DAYS_BEFORE = 7;
export const REMINDER_MIN_MONTHS = 6;

/** Whether the interval's charges are at least REMINDER_MIN_MONTHS months apart (semestral, yearly, cron alike). */
export function remindsOfCharges(recurringInterval: string): boolean {
  const parsed = parseInterval(recurringInterval);
  return parsed.ok && dueAtLeastMonthsApart(parsed.interval, REMINDER_MIN_MONTHS);
}

/**
 * When the reminder of the next charge goes out, or undefined when none is pending: not active, no
 * due day, no charge on it (inside a suspension, or at or after the planned end), an interval
 * charged more often, or this due day reminded already. A due day set less than
 * REMINDER_DAYS_BEFORE days ahead (a subscription created, changed or resumed then: the write is
 * later than the reminder's time) gets no late reminder.
 */
export function reminderAt(subscription: SubscriptionRecord): number | undefined {
  const day = subscription.next_due_day;
  if (subscription.status !== 'active' || day === undefined || subscription.reminded_for === day) return undefined;
  if (subscription.planned_end !== undefined && day >= subscription.planned_end) return undefined;
  if (suspendedAt(subscription, midnight(subscription, day))) return undefined;
  if (!remindsOfCharges(subscription.recurring_interval)) return undefined;
  const at = midnight(subscription, addDays(day, -REMINDER_DAYS_BEFORE));
  return at >= subscription.updated ? at : undefined;
}

/**
 * The subscription's time in the due index: the sooner of its pending reminder and of when it is
 * billable, so a billing run reads a subscription only when one of them is due.
 */
export function dueIndexAt(subscription: SubscriptionRecord): number | undefined {
  const billable = billableFrom(subscription);
  const reminder = reminderAt(subscription);
  if (reminder === undefined) return billable;
  return billable === undefined ? reminder : Math.min(billable, reminder);
}
