import { localMidnight } from '@svc/schedule';
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
