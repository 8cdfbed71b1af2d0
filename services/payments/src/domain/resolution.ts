import { logger, money, now } from '@svc/core';
import { queryAll, timeKey } from '@svc/table';
import type { Outcome } from '../providers/provider';
import { providerNamed } from '../providers/registry';
import { UNKNOWN_OUTCOME_SHARDS, unknownOutcomePartition } from '../repository/payment-repository';
import { storedContext } from './context';
import { confirmRefunds, settleFromProvider } from './provider-updates';

/**
 * Background work for payments whose provider did not answer (timeout, network, 5xx): each is
 * asked about again, by its provider reference or, when the answer to its creation was lost, by
 * our uuid in the provider's metadata. Found: settled as the provider says (never charged again).
 * Not found for GIVE_UP_SECONDS: the creation never reached the provider, so the payment fails
 * with `provider_unavailable`. Still unknown: asked again a minute later. Refunds the provider
 * did not answer are asked for again under their own reference (the provider does each once):
 * confirmed, or marked failed when refused.
 */
export const GIVE_UP_SECONDS = 15 * 60;

export async function resolveUnknownPayments(): Promise<number> {
  const at = now();
  const due = (
    await Promise.all(
      Array.from({ length: UNKNOWN_OUTCOME_SHARDS }, (_, shard) =>
        queryAll({ index: 'due', partition: unknownOutcomePartition(shard), sortBefore: `${timeKey(at)}~` }),
      ),
    )
  ).flat();
  let handled = 0;
  for (const entry of due) {
    const uuid = String(entry.duesk).split('#')[1];
    if (!uuid) continue;
    try {
      await settleFromProvider(uuid, (payment) => outcomeNow(payment, at));
      await confirmRefunds(uuid, (payment, refund) =>
        providerNamed(payment.provider)
          .refund(refund.uuid, money(refund.amount_minor, payment.currency), {
            context: storedContext(payment),
            providerReference: payment.provider_reference,
            paymentUuid: payment.uuid,
          })
          // Still no answer: asked again on a later pass.
          .catch(() => undefined),
      );
      handled += 1;
    } catch (error) {
      // One payment's provider trouble does not hold up the others; the next pass asks again.
      logger.warn('Could not resolve a payment with an unknown outcome', { payment: uuid, error });
    }
  }
  return handled;
}

async function outcomeNow(
  payment: Parameters<Parameters<typeof settleFromProvider>[1]>[0],
  at: number,
): Promise<Outcome & { providerReference?: string }> {
  const provider = providerNamed(payment.provider);
  if (!provider.outcomeOf) return { status: 'failed', reason: 'provider_unavailable' };
  const found = await provider.outcomeOf(payment.uuid, {
    context: storedContext(payment),
    providerReference: payment.provider_reference,
    paymentUuid: payment.uuid,
  });
  const stillUnknown = found.status === 'pending' && 'reason' in found && found.reason === 'provider_unavailable';
  if (stillUnknown && at - payment.created >= GIVE_UP_SECONDS)
    return { status: 'failed', reason: 'provider_unavailable' };
  return found;
}
