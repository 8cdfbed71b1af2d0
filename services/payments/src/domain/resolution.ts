import { logger, money, now } from '@svc/core';
import { queryAll, retryOnConflict, timeKey } from '@svc/table';
import type { FoundOutcome } from '../providers/provider';
import { providerNamed } from '../providers/registry';
import {
  findPayment,
  type PaymentRecord,
  UNKNOWN_OUTCOME_SHARDS,
  unknownOutcomePartition,
} from '../repository/payment-repository';
import { findPaymentSource, type PaymentSourceRecord } from '../repository/payment-source-repository';
import { settlePendingSource } from './approval';
import { refundTarget, storedContext } from './context';
import { checkEarlyCallbacks } from './early-callbacks';
import { confirmRefunds, settleFromProvider } from './provider-updates';
import { nextCheck } from './recheck';
import { savePaymentVersion, saveSourceVersion } from './versioned';

/**
 * Background work for what waits on a provider, read from the due index:
 *
 * - Payments whose provider did not answer (timeout, network, 5xx): asked about again a minute
 *   later, and then every minute, by the provider's id or, when the answer to the creation was
 *   lost, among the provider's own records. Found: settled as the provider says (never charged
 *   again). Failed with `provider_unavailable` only when the provider's records show none of ours
 *   (`absent`) once GIVE_UP_SECONDS have passed since the request, so nothing of it can still be
 *   in flight; while the provider does not answer, it is asked again, never failed. A provider
 *   that refuses our credentials is retried until ACCESS_GIVE_UP_SECONDS, then the payment fails
 *   (an alarm has fired since the first refusal; money found later is still recorded).
 * - Payments and sources waiting on the donor or a debit (3-D Secure, TWINT, SEPA): checked on
 *   the schedule of recheck.ts, so none depends on the provider's events alone.
 * - Refunds the provider did not answer: looked for, and asked again only when not found.
 */
export const GIVE_UP_SECONDS = 15 * 60;
export const ACCESS_GIVE_UP_SECONDS = 86_400;

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
      if (String(entry.pk).startsWith('PAYMENT_SOURCE#')) await checkSource(uuid, at);
      else if (String(entry.pk).startsWith('EARLY_CALLBACK#')) await checkEarlyCallbacks(uuid);
      else await checkPayment(uuid, at);
      handled += 1;
    } catch (error) {
      // One payment's provider trouble does not hold up the others; the next pass asks again.
      logger.warn('Could not resolve a payment or source waiting on its provider', { uuid, error });
    }
  }
  return handled;
}

async function checkPayment(uuid: string, at: number): Promise<void> {
  await settleFromProvider(uuid, (payment) => outcomeNow(payment, at));
  await confirmRefunds(uuid, (payment, refund) =>
    providerNamed(payment.provider)
      .refund(refund.uuid, money(refund.amount_minor, payment.currency), refundTarget(payment), refund.created)
      // Still no answer: asked again on a later pass.
      .catch(() => undefined),
  );
  await planNextCheck(uuid, at);
}

async function outcomeNow(payment: PaymentRecord, at: number): Promise<FoundOutcome> {
  const provider = providerNamed(payment.provider);
  if (!provider.outcomeOf) return { status: 'failed', reason: 'provider_unavailable' };
  const age = at - payment.created;
  const place = {
    context: storedContext(payment),
    providerReference: payment.provider_reference,
    paymentUuid: payment.uuid,
    created: payment.created,
    providerCustomer: payment.provider_customer,
    action: payment.action,
  };
  let found: FoundOutcome;
  try {
    found = await provider.outcomeOf(payment.uuid, place);
  } catch (error) {
    // Refused credentials long enough: a clear failure (the alarm has been on since the first).
    if (age >= ACCESS_GIVE_UP_SECONDS && isAccessRefusal(error))
      return { status: 'failed', reason: 'provider_unavailable' };
    throw error;
  }
  if (found.absent && age >= GIVE_UP_SECONDS) return { status: 'failed', reason: 'provider_unavailable' };
  const waitingForDonor = found.status === 'pending' && 'action' in found;
  // The donor never finished (3-D Secure, TWINT): given up at the provider, so it cannot complete later.
  // A provider that cancels by our reference needs no id of its own (issue 45: an Adyen redirect
  // the donor abandoned has none, and OFFER_CLOSED may never come).
  if (
    waitingForDonor &&
    payment.action &&
    nextCheck(payment.created, at, 'donor') === undefined &&
    (payment.provider_reference || provider.cancelsByReference)
  ) {
    const cancelled = await provider.cancel(payment.uuid, place).then(
      () => true,
      (error: unknown) => {
        logger.warn('The provider did not cancel an abandoned payment; read again next time', {
          payment: payment.uuid,
          error,
        });
        return false;
      },
    );
    if (cancelled && provider.cancelsByReference) return { status: 'failed', reason: 'approval_expired' };
    const after = await provider.outcomeOf(payment.uuid, place);
    return after.status === 'failed' && after.reason === 'cancelled'
      ? { status: 'failed', reason: 'approval_expired' }
      : after;
  }
  return found;
}

/** The provider refused our key or the connected account (not a lack of answer). */
function isAccessRefusal(error: unknown): boolean {
  return (error as { accessRefused?: unknown }).accessRefused === true;
}

/**
 * After a check, a payment still waiting on the donor or a debit is checked again on the
 * schedule, or no more once it ends (a debit still processing is then left to the provider's
 * events, with an error for support).
 */
async function planNextCheck(uuid: string, at: number): Promise<void> {
  await retryOnConflict(async () => {
    const payment = await findPayment(uuid);
    if (payment?.status !== 'pending' || payment.next_check === undefined || payment.next_check > at) return;
    if (payment.status_reason === 'provider_unavailable') return;
    const waitingFor = payment.action && payment.status_reason !== 'processing' ? 'donor' : 'provider';
    const planned = nextCheck(payment.created, at, waitingFor);
    // Past the donor's window but still pending (its cancel failed, or it is processing now):
    // asked again daily until the provider's end, never left to events alone.
    const next = planned ?? (waitingFor === 'donor' ? nextCheck(payment.created, at, 'provider') : undefined);
    if (next === undefined) {
      logger.error('A payment is still pending at its provider after the last planned check', {
        payment: payment.uuid,
        provider: payment.provider,
      });
    }
    const { next_check: _done, ...rest } = payment;
    await savePaymentVersion(payment, { ...rest, ...(next !== undefined ? { next_check: next } : {}), events: [] });
  });
}

/** A pending source: settled as the provider says now, given up once the donor has had their time. */
async function checkSource(uuid: string, at: number): Promise<void> {
  await retryOnConflict(async () => {
    const source = await findPaymentSource(uuid);
    if (source?.status !== 'pending' || source.next_check === undefined || source.next_check > at) return;
    const provider = providerNamed(source.provider);
    if (!provider.sourceOutcomeOf) return;
    const place = { context: storedContext(source), providerReference: source.provider_reference };
    const next = nextCheck(source.created, at, 'donor');
    const outcome =
      next === undefined && provider.abandonSource
        ? await provider.abandonSource(source.uuid, place)
        : await provider.sourceOutcomeOf(place);
    const settled = await settlePendingSource(withInstrument(source, outcome), outcome);
    if (settled.status !== 'pending' || next === undefined) return;
    await saveSourceVersion(settled, { ...settled, next_check: next });
  });
}

function withInstrument(
  source: PaymentSourceRecord,
  outcome: { instrumentToken?: string | undefined },
): PaymentSourceRecord {
  return outcome.instrumentToken && !source.instrument_token
    ? { ...source, instrument_token: outcome.instrumentToken }
    : source;
}
