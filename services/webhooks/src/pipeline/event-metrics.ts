import { BUSINESS_METRICS, type BusinessMetric, recordMetric } from '@svc/core';
import type { Envelope } from '../repository/webhook-repository';

const PAYMENT_OUTCOME = /^svc\.payments\.payment\.(succeeded|failed|cancelled)$/;

/**
 * The business metrics an event stands for, recorded when the stream publisher has put it on the
 * bus: every domain change that matters passes there once, whichever path made it (API, billing
 * run, provider notification). At least once, like the stream: a record the stream retries after
 * a partial publish counts its events again, which a rate or a trend barely feels.
 *
 * Payment outcomes carry `mode` (live or test), so alarms can watch live money only.
 */
export function recordEventMetrics(envelopes: readonly Envelope[]): void {
  for (const envelope of envelopes) {
    const outcome = PAYMENT_OUTCOME.exec(envelope.name)?.[1];
    if (outcome) {
      const mode = envelope.data.test_mode === true ? 'test' : 'live';
      recordMetric(BUSINESS_METRICS.paymentOutcomes, 1, { outcome, mode });
      const method = envelope.data.payment_method;
      if (typeof method === 'string')
        recordMetric(BUSINESS_METRICS.paymentOutcomesByMethod, 1, { outcome, mode, payment_method: method });
      continue;
    }
    if (envelope.name === 'svc.reconciliation.reconciliation_report.created') {
      const summary = (envelope.data.summary ?? {}) as Record<string, unknown>;
      for (const [result, field] of [
        ['matched', 'matched'],
        ['unmatched', 'unmatched'],
        ['error', 'errors'],
      ] as const) {
        const count = summary[field];
        if (typeof count === 'number' && count > 0)
          recordMetric(BUSINESS_METRICS.reconciliationRows, count, { result });
      }
      continue;
    }
    const metric = EVENT_METRICS[envelope.name];
    if (metric) recordMetric(metric, 1);
  }
}

const EVENT_METRICS: Readonly<Record<string, BusinessMetric>> = {
  'svc.payments.refund.succeeded': BUSINESS_METRICS.refunds,
  'svc.subscriptions.charge_attempt.failed': BUSINESS_METRICS.chargeAttemptsFailed,
  'svc.subscriptions.invoice.paid': BUSINESS_METRICS.invoicesPaid,
  'svc.subscriptions.subscription.suspended': BUSINESS_METRICS.subscriptionsSuspended,
};
