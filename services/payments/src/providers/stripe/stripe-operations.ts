import type Stripe from 'stripe';
import { STRIPE_API_VERSION } from './stripe-config';
import { applyOnce, HANDLED_STRIPE_EVENTS } from './stripe-events';

/**
 * What an operator does with Stripe (`pnpm ops stripe:events`, `pnpm ops stripe:webhook-endpoint`),
 * given an SDK client; apps/ops finds the stage's keys and table.
 */

/**
 * Missed events, from Stripe's Events API (kept 30 days: https://docs.stripe.com/api/events/list),
 * applied through the same code as deliveries, each once (an event applied before is skipped).
 * Oldest first, as they happened.
 */
export async function replayStripeEvents(
  stripe: Stripe,
  options: { since: number; account?: string | undefined },
): Promise<{ read: number; applied: number; duplicates: number }> {
  const requestOptions = options.account ? { stripeAccount: options.account } : {};
  const events: Stripe.Event[] = [];
  for await (const event of stripe.events.list(
    // `types` takes at most 20 names: HANDLED_STRIPE_EVENTS is kept within that.
    { created: { gte: options.since }, types: [...HANDLED_STRIPE_EVENTS], limit: 100 },
    requestOptions,
  )) {
    events.push(event);
  }
  events.sort((a, b) => a.created - b.created);
  let applied = 0;
  let duplicates = 0;
  for (const event of events) {
    // A connected account's event carries its account, as a delivery would.
    const result = await applyOnce(options.account && !event.account ? { ...event, account: options.account } : event);
    if (result.duplicate) duplicates += 1;
    else if (result.applied) applied += 1;
  }
  return { read: events.length, applied, duplicates };
}

/**
 * Our endpoint at Stripe: created at the API version we are pinned to, with the events we handle
 * (`connect`: the connected accounts' events, on an endpoint of their own); an existing one at the
 * same URL gets the current event list. Stripe shows an endpoint's signing secret only when it is
 * created, and never changes an endpoint's API version
 * (https://docs.stripe.com/api/webhook_endpoints/update has no api_version): an endpoint at
 * another version is left as it is and a new one is made beside it (give both secrets while
 * rolling, then delete the old endpoint in Stripe's dashboard).
 */
export async function ensureWebhookEndpoint(
  stripe: Stripe,
  options: { url: string; connect: boolean },
): Promise<{ id: string; action: 'created' | 'updated'; secret?: string; note?: string }> {
  // Stripe does not show whether an endpoint is a Connect one: ours say it in their description.
  const description = `svc fundraising payments${options.connect ? ' (connected accounts)' : ''}`;
  let existing: Stripe.WebhookEndpoint | undefined;
  for await (const endpoint of stripe.webhookEndpoints.list({ limit: 100 })) {
    if (endpoint.url === options.url && endpoint.description === description) existing = endpoint;
  }
  if (existing && existing.api_version === STRIPE_API_VERSION) {
    await stripe.webhookEndpoints.update(existing.id, { enabled_events: [...HANDLED_STRIPE_EVENTS] });
    return { id: existing.id, action: 'updated' };
  }
  const created = await stripe.webhookEndpoints.create({
    url: options.url,
    api_version: STRIPE_API_VERSION as Stripe.WebhookEndpointCreateParams.ApiVersion,
    enabled_events: [...HANDLED_STRIPE_EVENTS],
    connect: options.connect,
    description,
  });
  return {
    id: created.id,
    action: 'created',
    ...(created.secret ? { secret: created.secret } : {}),
    ...(existing
      ? {
          note: `Endpoint ${existing.id} at the same URL is pinned to ${existing.api_version}; delete it in Stripe's dashboard once the new one receives events`,
        }
      : {}),
  };
}
