import { ValidationError } from '@svc/core';
import {
  addDays,
  dueAfter,
  dueOnOrAfter,
  type Interval,
  type LocalDate,
  latestDueBetween,
  localDateOf,
  parseInterval,
  parseLocalDate,
} from '@svc/schedule';
import type { SubscriptionRecord } from '../repository/records';

/** The glue between subscriptions and the calendar: which day is due next, and when billing starts. */

export function intervalOrThrow(text: string, property = 'recurring_interval'): Interval {
  const parsed = parseInterval(text);
  if (!parsed.ok) {
    throw ValidationError.field(
      property,
      'error.validation.not_valid',
      `${parsed.message} (at character ${parsed.position + 1})`,
    );
  }
  return parsed.interval;
}

/** Dates beyond this are refused: far enough for any plan, well inside what calendars compute. */
export const LATEST_DATE = '2199-12-31';

export function dateOrThrow(text: string, property: string): LocalDate {
  const date = parseLocalDate(text);
  if (date === undefined) {
    throw ValidationError.field(property, 'error.validation.not_valid', 'A calendar date as YYYY-MM-DD');
  }
  if (date > LATEST_DATE) {
    throw ValidationError.field(property, 'error.validation.not_valid', `A date no later than ${LATEST_DATE}`);
  }
  return date;
}

/**
 * The planned dates' rules (today in the subscription's zone): `planned_effective_from` today or
 * later, `planned_end` after today and after `planned_effective_from`. `prefix` names the fields
 * inside a payment request's `subscription` object.
 */
export function checkPlannedDates(
  zone: string,
  from: LocalDate | undefined,
  end: LocalDate | undefined,
  at: number,
  prefix = '',
): void {
  const day = localDateOf(at, zone);
  if (from !== undefined && from < day) {
    throw ValidationError.field(
      `${prefix}planned_effective_from`,
      'error.validation.not_valid',
      'planned_effective_from must be today or later',
    );
  }
  if (end !== undefined && (end <= day || (from !== undefined && end <= from))) {
    throw ValidationError.field(
      `${prefix}planned_end`,
      'error.validation.not_valid',
      'planned_end must be after today and after planned_effective_from',
    );
  }
}

const later = (a: LocalDate, b: LocalDate) => (a > b ? a : b);

export function today(subscription: Pick<SubscriptionRecord, 'timezone'>, at: number): LocalDate {
  return localDateOf(at, subscription.timezone);
}

/** Due days on or after the planned end do not exist. */
function beforeEnd(subscription: SubscriptionRecord, day: LocalDate | undefined): LocalDate | undefined {
  if (day === undefined) return undefined;
  return subscription.planned_end !== undefined && day >= subscription.planned_end ? undefined : day;
}

/**
 * The next due day from `at` on: the first due day that is not before the anchor, not before
 * today, and after the last invoiced period (so a period is never billed twice, and
 * `next_due_date` is always in the future of the last charge).
 */
export function nextDueFrom(subscription: SubscriptionRecord, at: number): LocalDate | undefined {
  const anchor = subscription.anchor;
  if (anchor === undefined) return undefined;
  const interval = intervalOrThrow(subscription.recurring_interval);
  let from = later(anchor, today(subscription, at));
  if (subscription.last_period !== undefined) from = later(from, addDays(subscription.last_period, 1));
  return beforeEnd(subscription, dueOnOrAfter(interval, anchor, from));
}

/** The first due day after today (the missed-periods rule: skipped periods are not charged). */
export function nextDueAfterToday(subscription: SubscriptionRecord, at: number): LocalDate | undefined {
  if (subscription.anchor === undefined) return undefined;
  const interval = intervalOrThrow(subscription.recurring_interval);
  return beforeEnd(subscription, dueAfter(interval, subscription.anchor, today(subscription, at)));
}

/** The latest due period between the stored due day and today: the one period a late run charges. */
export function periodToCharge(subscription: SubscriptionRecord, dueDay: LocalDate, at: number): LocalDate {
  if (subscription.anchor === undefined) return dueDay;
  const interval = intervalOrThrow(subscription.recurring_interval);
  const day = today(subscription, at);
  const end = subscription.planned_end === undefined ? undefined : addDays(subscription.planned_end, -1);
  const until = end !== undefined && end < day ? end : day;
  return latestDueBetween(interval, subscription.anchor, dueDay, until) ?? dueDay;
}

/** The first due day on or after `day` (used to resume after a suspension). */
export function dueOnOrAfterDay(subscription: SubscriptionRecord, day: LocalDate): LocalDate | undefined {
  if (subscription.anchor === undefined) return undefined;
  const interval = intervalOrThrow(subscription.recurring_interval);
  return beforeEnd(subscription, dueOnOrAfter(interval, subscription.anchor, later(day, subscription.anchor)));
}

/**
 * The due day the API shows: the stored one, or, when it falls inside a suspension, the first due
 * day once the suspension ends (none while the suspension is indefinite).
 */
export function shownNextDueDay(subscription: SubscriptionRecord): LocalDate | undefined {
  try {
    return nextShownDay(subscription);
  } catch {
    // A response never fails on a calendar question; the stored due day is the honest answer.
    return subscription.next_due_day;
  }
}

function nextShownDay(subscription: SubscriptionRecord): LocalDate | undefined {
  const day = subscription.next_due_day;
  if (day === undefined || subscription.suspension_start === undefined || day < subscription.suspension_start) {
    return day;
  }
  if (subscription.suspension_end === undefined) return undefined;
  if (day >= subscription.suspension_end) return day;
  return dueOnOrAfterDay(subscription, subscription.suspension_end);
}
