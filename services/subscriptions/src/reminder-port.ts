import type { TransactItem } from '@svc/table';

/**
 * What subscriptions asks of the donor portal for a charge reminder (contract section 12): the
 * mail and its portal link as writes for the subscriptions domain's own transaction, and what to
 * do once it is committed (the mail queue's message). The portal owns links and depends on
 * subscriptions, so subscriptions reaches it only through this port; apps/api wires the portal's
 * `reminderWrites` in (wireReminders), in every process that runs the billing worker.
 */
export interface ReminderSubscription {
  uuid: string;
  organisation_uuid: string;
  supporter_uuid?: string;
  /** Minor units. */
  amount: number;
  currency: string;
}

/** The charge a reminder announces: its due day (the subscription's zone) and when it starts. */
export interface ReminderCharge {
  day: string;
  at: number;
}

export interface ReminderWrites {
  /** Each conditional on its item being new: a failed condition means it was written before. */
  writes: TransactItem[];
  afterCommit: () => Promise<void>;
}

export interface ReminderPort {
  /** Undefined when the subscription's supporter cannot be reminded (none, or no e-mail). */
  reminderWrites(subscription: ReminderSubscription, charge: ReminderCharge): Promise<ReminderWrites | undefined>;
}

let port: ReminderPort | undefined;

export function useReminders(reminders: ReminderPort): void {
  port = reminders;
}

export function reminders(): ReminderPort {
  if (!port) throw new Error('No reminder port is wired (apps/api wireReminders)');
  return port;
}
