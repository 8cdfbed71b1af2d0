import { logger, now } from '@svc/core';
import { findPaymentSource } from '@svc/payments';
import { localMidnight } from '@svc/schedule';
import { type GuardedWrite, retryOnConflict, transactWrite, versioned } from '@svc/table';
import { reminders } from '../reminder-port';
import type { SubscriptionRecord } from '../repository/records';
import { reminderAt } from '../repository/state';
import { findSubscription, subscriptionPut } from '../repository/subscription-repository';
import { attemptCharge } from './billing';

/** Thrown inside the transaction when the reminder's mail or link was written before. */
class ReminderWrittenBefore extends Error {}

/**
 * The reminder step of a due subscription (contract section 12), before its billing step: when
 * the pending reminder's time has come (state.ts reminderAt) and its charge has not, the
 * subscription is marked `reminded_for` its due day and the portal's mail and link are written in
 * the same transaction, guarded by the version read. A message delivered twice, or two workers at
 * once, queue one mail: the loser's write fails on the version, it reads again and finds the day
 * reminded. A supporter who cannot be reminded (no e-mail) is marked all the same, so the due
 * index moves on to the charge. Returns whether a mail was queued.
 */
export async function remindIfDue(uuid: string): Promise<boolean> {
  let queued: (() => Promise<void>) | undefined;
  await retryOnConflict(async () => {
    queued = undefined;
    const subscription = await findSubscription(uuid);
    if (!subscription) return;
    const at = now();
    const due = reminderAt(subscription);
    const day = subscription.next_due_day;
    if (due === undefined || due > at || day === undefined) return;
    const chargeAt = localMidnight(day, subscription.timezone);
    // A run so late that the charge is due too: the billing step charges it and moves the day on.
    if (at >= chargeAt) return;
    const next: SubscriptionRecord = {
      ...structuredClone(subscription),
      events: [],
      version: subscription.version + 1,
      updated: at,
      reminded_for: day,
    };
    const save = (extra: GuardedWrite[]) =>
      transactWrite([versioned(subscriptionPut(next, subscription.version)), ...extra]);
    // The amount the charge will be: with the fees covered, the total the source's fees make now.
    const source = subscription.cover_fees ? await findPaymentSource(subscription.payment_source_uuid) : undefined;
    const amount = source
      ? (await attemptCharge(subscription, source, subscription.amount)).total
      : subscription.amount;
    const reminder = await reminders().reminderWrites(
      {
        uuid: subscription.uuid,
        organisation_uuid: subscription.organisation_uuid,
        ...(subscription.supporter_uuid === undefined ? {} : { supporter_uuid: subscription.supporter_uuid }),
        amount,
        currency: subscription.currency,
      },
      { day, at: chargeAt },
    );
    if (!reminder) {
      await save([]);
      return;
    }
    try {
      await save(reminder.writes.map((item) => ({ item, onConditionFailed: () => new ReminderWrittenBefore() })));
      queued = reminder.afterCommit;
    } catch (error) {
      // The day was reminded before and the mark lost since (the due day moved away and back).
      if (!(error instanceof ReminderWrittenBefore)) throw error;
      await save([]);
    }
  });
  if (!queued) return false;
  try {
    await queued();
  } catch (error) {
    // Written, so not lost: the mail sweeper queues it within its requeue time.
    logger.warn('A charge reminder was written but not queued; the mail sweeper will', { uuid, error: error as Error });
  }
  return true;
}
