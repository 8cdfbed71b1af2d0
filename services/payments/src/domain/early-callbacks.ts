import { BUSINESS_METRICS, logger, recordMetric } from '@svc/core';
import { isWritten, readEarly, settleKept, UNRECORDED_PAYMENT } from './early-callback-store';

/**
 * Applying the provider callbacks kept because they came before their payment was written
 * (early-callback-store.ts says why and how they are kept): when a pending payment of a provider
 * that keeps them is written, and by the resolver once their time is up.
 */

/** How each provider applies a kept callback: its notifications' code, loaded when first needed. */
const APPLIERS: Readonly<Record<string, () => Promise<(payload: string) => Promise<void>>>> = {
  adyen: async () => (await import('../providers/adyen/adyen-notifications')).applyEarlyAdyenCallback,
};

/**
 * What a request that wrote a payment or source answers: the record as written, or, if it is
 * pending at a provider that keeps early callbacks and one was kept for it (issue 45, point 6),
 * as it is after they are applied. Called by the route handlers (a leaf of the module graph: the
 * providers' notification code builds on the domain that writes payments). Only a pending record
 * can have news; nothing is read for the others.
 */
export async function withEarlyCallbacks<T extends { uuid: string; status: string; provider: string }>(
  written: T,
  reread: (uuid: string) => Promise<T | undefined>,
): Promise<T> {
  if (written.status !== 'pending' || !(written.provider in APPLIERS)) return written;
  if ((await applyEarlyCallbacks(written.uuid)) === 0) return written;
  return (await reread(written.uuid)) ?? written;
}

/**
 * Applies the callbacks kept for a payment or source now written (its provider's
 * registered applier), then takes them out of the due index, unless more came meanwhile (then
 * those are applied too). Answers how many were applied.
 */
export async function applyEarlyCallbacks(reference: string): Promise<number> {
  let applied = 0;
  for (let round = 0; round < 3; round++) {
    const kept = await readEarly(reference);
    if (!kept?.pending) return applied;
    const load = APPLIERS[kept.provider];
    if (!load) throw new Error(`No way to apply ${kept.provider}'s early callbacks is known`);
    const apply = await load();
    for (const payload of kept.payloads) await apply(payload);
    applied += kept.payloads.length;
    if (await settleKept(reference, kept.payloads.length)) return applied;
  }
  return applied;
}

/**
 * The resolver's look at callbacks still waiting when their time is up: the payment written
 * after all (its request's own look missed them): applied; never written: alarmed once.
 */
export async function checkEarlyCallbacks(reference: string): Promise<void> {
  if (await isWritten(reference)) {
    await applyEarlyCallbacks(reference);
    return;
  }
  const kept = await readEarly(reference);
  if (!kept?.pending) return;
  recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'unrecorded_payment' });
  logger.error(UNRECORDED_PAYMENT, { provider: kept.provider, reference, callbacks: kept.payloads.length });
  await settleKept(reference, kept.payloads.length);
}
