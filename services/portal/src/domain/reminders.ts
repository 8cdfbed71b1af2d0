import { randomBytes } from 'node:crypto';
import { logger, now, ValidationError } from '@svc/core';
import { enqueueMail, mailOutboxWrite, type QueueMailInput } from '@svc/mail';
import { findSupporter } from '@svc/supporters';
import type { TransactItem } from '@svc/table';
import { contrastRatio, TEXT_CONTRAST, WHITE } from '../page/contrast';
import { linkTokenHash, PORTAL_LINK, type PortalLinkRecord } from '../repository/link-repository';
import { brandOf } from './brand';
import { portalLocale } from './links';

/**
 * The charge reminder's mail and its portal link (contract section 12: subscriptions charged
 * every 6 months or less often hear of each charge 7 days ahead, with the amount, the date and a
 * portal link). The subscriptions domain decides when and writes them in its own transaction with
 * the subscription, guarded by the version it read, so a reminder is queued once; this side only
 * builds the writes (the subscriptions domain's ReminderPort, wired in apps/api).
 *
 * - To the supporter the subscription is bound to, in the supporter's language, at the e-mail it
 *   has then; a subscription without a supporter, or a supporter without an e-mail SES can send
 *   to, gets none.
 * - The link is a `manage` link for the supporter, bound to the subscription. It is valid until
 *   the charge (the reminder's purpose is a change before it) rather than the 24 hours of a link
 *   made through the API, and redeemable once like any link; a used or expired one leads to the
 *   page that mails a fresh link.
 * - With the organisation's portal off there is no link: the reminder still goes, naming the
 *   organisation to contact instead (a link into a portal that is off would only show an error).
 */

/** What a reminder needs of the subscription (the subscriptions domain's record has these). */
export interface ReminderSubscription {
  uuid: string;
  organisation_uuid: string;
  supporter_uuid?: string;
  amount: number;
  currency: string;
}

/** The charge announced: its day in the subscription's time zone, and the instant it starts. */
export interface ReminderCharge {
  day: string;
  at: number;
}

/** The service's public address outside a request (SVC_PUBLIC_URL; the local runtime's by default). */
export const LOCAL_PUBLIC_URL = 'http://127.0.0.1:3000';

export function publicBaseUrl(): string {
  return (process.env.SVC_PUBLIC_URL || LOCAL_PUBLIC_URL).replace(/\/+$/, '');
}

/** The mail's id: one reminder per subscription and charge day, whoever queues it. */
export const reminderMailId = (subscriptionUuid: string, day: string) => `reminder:${subscriptionUuid}:${day}`;

/**
 * The writes of one reminder (the link, if any, and the outbox item, each conditional on being
 * new) and what to do once they are committed (the mail queue's message), or undefined when the
 * subscription's supporter cannot be reminded.
 */
export async function reminderWrites(
  subscription: ReminderSubscription,
  charge: ReminderCharge,
): Promise<{ writes: TransactItem[]; afterCommit: () => Promise<void> } | undefined> {
  if (subscription.supporter_uuid === undefined) return undefined;
  const supporter = await findSupporter(subscription.supporter_uuid);
  if (!supporter || supporter.organisation_uuid !== subscription.organisation_uuid) return undefined;
  const email = typeof supporter.email === 'string' ? supporter.email.trim().toLowerCase() : '';
  if (!email) return undefined;
  const brand = await brandOf(subscription.organisation_uuid);
  if (!brand) throw new Error(`Organisation ${subscription.organisation_uuid} of a reminder is missing`);
  const { settings } = brand;
  const name = brand.name.trim().slice(0, 200);
  const locale = portalLocale(undefined, supporter.locale);
  const writes: TransactItem[] = [];
  let url: string | undefined;
  if (settings.enabled) {
    // 256 random bits, as every link's token; only its keyed hash is stored.
    const token = randomBytes(32).toString('base64url');
    const link: PortalLinkRecord = {
      token_hash: await linkTokenHash(token),
      organisation_uuid: subscription.organisation_uuid,
      supporter_uuid: supporter.uuid,
      email,
      flow: 'manage',
      subscription_uuid: subscription.uuid,
      ...(settings.return_url ? { return_url: settings.return_url } : {}),
      locale,
      created: now(),
      expires_at: charge.at,
    };
    writes.push(PORTAL_LINK.create(link).item);
    url = `${publicBaseUrl()}/portal?token=${token}`;
  }
  const mail: QueueMailInput<'charge_reminder'> = {
    id: reminderMailId(subscription.uuid, charge.day),
    to: email,
    locale,
    template: 'charge_reminder',
    data: {
      organisation_name: name,
      amount: subscription.amount,
      currency: subscription.currency,
      charge_date: charge.day,
      // The button has white text: the brand colour only where white is readable on it (as links' mails).
      ...(url ? { portal_url: url } : {}),
      ...(url && contrastRatio(brand.color, WHITE) >= TEXT_CONTRAST ? { brand_color: brand.color } : {}),
    },
  };
  try {
    writes.push(mailOutboxWrite(mail));
  } catch (error) {
    // An address SES would refuse (stored before addresses were checked as strictly): no reminder,
    // and the charge goes ahead as always.
    if (!(error instanceof ValidationError)) throw error;
    logger.warn('No charge reminder: the outbox refuses the mail', {
      subscription_uuid: subscription.uuid,
      detail: error.message,
    });
    return undefined;
  }
  return { writes, afterCommit: () => enqueueMail(mail.id) };
}
