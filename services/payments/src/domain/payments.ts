import {
  amountRefusal,
  logger,
  money,
  newResourceUuid,
  now,
  onAccount,
  type Principal,
  readFor,
  ValidationError,
} from '@svc/core';
import { retryOnConflict } from '@svc/table';
import { providerNamed } from '../providers/registry';
import { findPayment, type PaymentRecord, type RefundRecord } from '../repository/payment-repository';
import { refundTarget, storedContext } from './context';
import { paymentStatusEvents } from './events';
import { applyProviderRefunds, refundToConfirm } from './provider-updates';
import { savePaymentVersion } from './versioned';

export async function getPayment(principal: Promise<Principal>, uuid: string): Promise<PaymentRecord> {
  return readFor(principal, findPayment(uuid), 'Payment not found', onAccount);
}

/**
 * Refunds all that is left (no amount) or part of it. The refunded total is guarded by the
 * payment's version, so concurrent refunds are re-checked against what the others took and can
 * never exceed the amount. The refund is recorded `pending` before the provider is asked, so the
 * provider is never asked for more than the payment holds, and announced only once the provider
 * has answered: `succeeded` (`svc.payments.refund.succeeded`), `failed` (`…refund.failed`, its
 * amount free again), or still `pending` (a SEPA refund, settled by the provider's events). The
 * refund's uuid is the provider's idempotency reference: a re-run of a request that died (same
 * Idempotency-Key, same body) names the same refund, finds it recorded and only asks the provider
 * again, which answers a repeated reference without refunding twice.
 */
export async function refundPayment(
  principal: Promise<Principal>,
  uuid: string,
  requested: { minor: number; currency: string } | undefined,
): Promise<{ payment: PaymentRecord; refund: RefundRecord }> {
  const refundUuid = newResourceUuid('refund');
  const recorded = await retryOnConflict(async () => {
    const payment = await getPayment(principal, uuid);
    const earlier = payment.refunds.find((refund) => refund.uuid === refundUuid);
    if (earlier) return { payment, refund: earlier, resumed: true };
    if (payment.status !== 'succeeded') {
      throw ValidationError.field(
        'status',
        'error.payment.not_refundable',
        `A ${payment.status} payment cannot be refunded`,
      );
    }
    const residual = payment.amount_minor - payment.refunded_minor;
    if (requested && requested.currency !== payment.currency) {
      throw ValidationError.field(
        'amount.currency',
        'error.validation.not_valid',
        `The payment is in ${payment.currency}`,
      );
    }
    const amount = requested?.minor ?? residual;
    if (amount <= 0) {
      throw ValidationError.field('amount.value', 'error.refund.nothing_to_refund', 'There is nothing left to refund');
    }
    if (amount > residual) {
      throw ValidationError.field(
        'amount.value',
        'error.refund.exceeds_residual',
        `At most ${residual} minor units are left to refund`,
      );
    }
    // In the provider's minor units exactly, or not at all (Stripe's KWD refunds in tens of fils).
    const unrepresentable = amountRefusal(payment.provider, payment.currency, amount);
    if (unrepresentable) throw ValidationError.field('amount.value', 'error.validation.not_valid', unrepresentable);
    const refund: RefundRecord = { uuid: refundUuid, amount_minor: amount, status: 'pending', created: now() };
    // Listed to confirm in the same write: should this request die before the provider answers,
    // the resolver asks the provider (looking for it first) and settles it.
    const next = {
      ...payment,
      refunded_minor: payment.refunded_minor + amount,
      refunds: [...payment.refunds, refund],
      refunds_to_confirm: [...(payment.refunds_to_confirm ?? []), refund.uuid],
      events: [],
    };
    const saved = await savePaymentVersion(payment, next);
    return { payment: saved, refund, resumed: false };
  });
  const provider = providerNamed(recorded.payment.provider);
  const outcome = await provider
    .refund(
      refundUuid,
      money(recorded.refund.amount_minor, recorded.payment.currency),
      refundTarget(recorded.payment),
      // A re-run of this request: the provider looks for the first run's refund before sending.
      recorded.resumed ? recorded.refund.created : undefined,
    )
    .catch(async (error: unknown) => {
      // No answer: the refund stays recorded and the resolver asks the provider again under the
      // same reference until it answers (a refused one is then marked failed).
      logger.warn('The provider did not answer a refund; it will be asked again', { refund: refundUuid, error });
      await refundToConfirm(recorded.payment.uuid, refundUuid);
      return undefined;
    });
  if (!outcome) return recorded;
  // Applied as the provider answered (a refusal is kept as failed, its amount free again).
  const answered =
    (await applyProviderRefunds(recorded.payment.uuid, [
      { uuid: refundUuid, amountMinor: recorded.refund.amount_minor, outcome },
    ])) ?? recorded.payment;
  return { payment: answered, refund: answered.refunds.find((r) => r.uuid === refundUuid) ?? recorded.refund };
}

/**
 * Cancels a payment that still waits for the donor; any other status is a 400. The provider
 * cancels first (under the payment's own idempotency key, so a retried step repeats nothing):
 * what it refuses (a debit already processing, an approval that just completed) stays as it is,
 * and a payment whose provider has not answered yet cannot be cancelled until it has.
 */
export function cancelPayment(principal: Promise<Principal>, uuid: string, reason?: string): Promise<PaymentRecord> {
  return retryOnConflict(async () => {
    const payment = await getPayment(principal, uuid);
    if (payment.status !== 'pending') {
      throw ValidationError.field(
        'status',
        'error.payment.not_cancellable',
        `A ${payment.status} payment cannot be cancelled`,
      );
    }
    if (payment.status_reason === 'provider_unavailable') {
      throw ValidationError.field(
        'status',
        'error.payment.not_cancellable',
        'The provider has not answered for this payment yet; try again once it has',
      );
    }
    await providerNamed(payment.provider).cancel(payment.uuid, {
      context: storedContext(payment),
      providerReference: payment.provider_reference,
    });
    const { action: _action, instrument_token: _token, ...rest } = payment;
    const next: PaymentRecord = {
      ...rest,
      status: 'cancelled',
      status_reason: 'cancelled_by_merchant',
      svc_parameters:
        reason === undefined ? payment.svc_parameters : { ...payment.svc_parameters, cancellation_reason: reason },
      event_sequence: payment.event_sequence + 1,
      events: [],
    };
    next.events = paymentStatusEvents(next);
    return savePaymentVersion(payment, next);
  });
}

/** PUT replaces the custom parameters; PATCH merges into them. */
export function changeCustomParameters(
  principal: Promise<Principal>,
  uuid: string,
  parameters: Record<string, unknown>,
  mode: 'replace' | 'merge',
): Promise<PaymentRecord> {
  return retryOnConflict(async () => {
    const payment = await getPayment(principal, uuid);
    const custom_parameters = mode === 'replace' ? parameters : { ...payment.custom_parameters, ...parameters };
    return savePaymentVersion(payment, { ...payment, custom_parameters, events: [] });
  });
}
