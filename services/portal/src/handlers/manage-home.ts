import { isUuid, now } from '@svc/core';
import { findPaymentSource } from '@svc/payments';
import { donorReceipts, receiptNumber } from '@svc/receipts';
import { readSubscriptionAs } from '@svc/subscriptions';
import { donorSubscriptions } from '../domain/manage';
import { settingsOf } from '../domain/settings';
import type { SafeHtml } from '../page/html';
import { type HomeExtras, retentionOfferOf, subscriptionList, subscriptionPath } from '../page/manage-pages';
import type { PageContext } from '../page/pages';
import type { PortalSession } from '../session/sessions';

/**
 * The home page's content for a signed-in donor: their subscriptions (a new payment method
 * approved meanwhile is taken into use as they are listed), a link to the gifts of this year,
 * their yearly receipts (each a link to its PDF),
 * and, for a session whose link was for one subscription's payment method or cancellation, a
 * link straight to that form (a link rather than a redirect: the donor still sees the list).
 * `method` is the subscription a payment method approval came back for: its result is shown.
 */
export async function homeContent(session: PortalSession, ctx: PageContext, method?: string): Promise<SafeHtml> {
  const [subscriptions, settings, receipts] = await Promise.all([
    donorSubscriptions(session),
    settingsOf(session.organisation_uuid),
    donorReceipts(session.organisation_uuid, session.supporter_uuid),
  ]);
  const extras: HomeExtras = {
    year: new Date(now() * 1000).getUTCFullYear(),
    receipts: receipts.map((receipt) => ({
      uuid: receipt.uuid,
      number: receiptNumber(receipt),
      year: receipt.year,
      total: receipt.total_minor,
      currency: receipt.currency,
      voided: receipt.status === 'voided',
    })),
  };
  const target = session.subscription_uuid;
  if (target && subscriptions.some((s) => s.uuid === target)) {
    if (session.flow === 'payment_method' && settings.features.payment_method) {
      extras.flow = { kind: 'payment_method', href: `${subscriptionPath(target)}#payment-method-heading` };
    }
    if (session.flow === 'cancel' && settings.features.cancel) {
      const offer = retentionOfferOf(settings);
      extras.flow = { kind: 'cancel', href: `${subscriptionPath(target)}/${offer ? 'offer' : 'cancel'}` };
    }
  }
  if (method && isUuid(method) && subscriptions.some((s) => s.uuid === method.toLowerCase())) {
    extras.methodResult = await methodResult(session, method.toLowerCase());
  }
  return subscriptionList(ctx, subscriptions, extras);
}

/** After the approval: the new method in use, still waiting, or not approved (the old one kept). */
async function methodResult(session: PortalSession, uuid: string): Promise<'active' | 'pending' | 'failed'> {
  const record = await readSubscriptionAs(session, uuid);
  if (!record.pending_source_uuid) return 'active';
  const source = await findPaymentSource(record.pending_source_uuid);
  return source?.status === 'failed' ? 'failed' : 'pending';
}
