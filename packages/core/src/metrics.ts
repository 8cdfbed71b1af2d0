import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Business metrics as CloudWatch embedded metric format (EMF) lines, through Powertools Metrics:
 * each `recordMetric` writes one JSON line to stdout at once, which CloudWatch Logs turns into a
 * metric in AWS and which the local runtime simply prints. Every metric is in its stage's namespace
 * with the dimension `service: svc` (whichever function emits it, so dashboards and alarms name one
 * series) plus its own dimensions. The names are the contract with infra/constructs
 * (dashboard, alarms): change them together.
 *
 * `POWERTOOLS_METRICS_DISABLED=true` turns them off.
 */
/**
 * Each stage's metrics in a namespace of its own (`svc/<stage>`, `svc/local` locally), so a dev
 * stage in the same account never feeds prod's alarms or dashboard. The functions read their
 * stage from `SVC_STAGE`, which the template sets.
 */
export function metricsNamespace(stage: string = process.env.SVC_STAGE ?? 'local'): string {
  return `svc/${stage}`;
}
export const METRICS_SERVICE = 'svc';

export const BUSINESS_METRICS = {
  /** A payment reached an outcome; dimensions `outcome` (succeeded, failed, cancelled). */
  paymentOutcomes: 'PaymentOutcomes',
  /** The same, per `payment_method` too. */
  paymentOutcomesByMethod: 'PaymentOutcomesByMethod',
  /** Refunds that succeeded. */
  refunds: 'Refunds',
  /**
   * What a provider did that should never happen and needs a person; dimension `kind`:
   * `succeeded_after_failure` (a payment we had failed was paid after all: the money is recorded,
   * the donor may have paid twice), `access_refused` (the provider refused our key or a connected
   * account), `paid_at_other_provider` (a provider reports paid a payment recorded at another
   * one: the donor may have paid twice), `unrecorded_payment` (Adyen took money for a payment
   * never recorded), `cancelled_after_success` (Adyen cancelled a payment recorded as paid).
   */
  providerAnomalies: 'ProviderAnomalies',
  /**
   * A provider's circuit changed state (payments/provider-health); dimensions `provider` and
   * `state` (open, half_open, closed). An open circuit is alarmed.
   */
  providerCircuitChanges: 'ProviderCircuitChanges',
  /** New payments sent to a later candidate of their route; dimensions `provider` (the one skipped) and `reason`. */
  providerFailovers: 'ProviderFailovers',
  /** Charge attempts of the billing run that failed (the dunning starts or goes on). */
  chargeAttemptsFailed: 'ChargeAttemptsFailed',
  /** Invoices paid (by a charge attempt, or a payment that settled one). */
  invoicesPaid: 'InvoicesPaid',
  /** Subscriptions suspended (the dunning gave up, or a client suspended them). */
  subscriptionsSuspended: 'SubscriptionsSuspended',
  /**
   * One webhook delivery attempt; dimension `outcome` (delivered, failed, gone, throttled: the
   * endpoint asked to wait), or one held back by its endpoint's pace (`paced`).
   */
  webhookDeliveries: 'WebhookDeliveries',
  /**
   * From an event's creation to an attempt or hold of its delivery that no failed attempt came
   * before (the first attempt whatever its outcome, an attempt after the endpoint's pause, a hold
   * by pace or the in-flight cap), in seconds (service time); retries after a failure are not told.
   */
  eventToDeliveryLag: 'EventToDeliveryLag',
  /**
   * A provider's callback refused before anything was applied (a Stripe event delivery, an Adyen
   * notification batch); dimensions `provider` (stripe, adyen) and `reason`: `signature` (a
   * signature missing or not matching any key, after one re-read of the keys), `basic_auth` (Adyen:
   * the configured basic auth not given), `no_key` (no key configured to check it with). Alarmed
   * per provider, every reason summed (infra: ProviderCallbacksRefused-<provider>).
   */
  providerCallbacksRefused: 'ProviderCallbacksRefused',
  /**
   * The deliveries a sweep found due in the table (paced, paused, retried or lost by their
   * message), per sweep, and the oldest one's wait in seconds (services/webhooks delivery-sweeper).
   */
  webhookBacklog: 'WebhookBacklog',
  webhookBacklogAge: 'WebhookBacklogAge',
  /** A mail SES accepted (@svc/mail worker); dimension `template`. */
  mailsSent: 'MailsSent',
  /** A SendEmail call that failed (the mail is tried again); dimension `reason` (the SES error's name). */
  mailSendFailures: 'MailSendFailures',
  /**
   * Unsent mails a sweep found past their due time and queued again, per sweep, and the oldest
   * one's wait since it was queued, in seconds (@svc/mail sweepUnsentMail). Alarmed (infra Mail).
   */
  mailUnsent: 'MailUnsent',
  mailUnsentAge: 'MailUnsentAge',
  /** Rows of a reconciled bank file; dimension `result` (matched, unmatched, error). */
  reconciliationRows: 'ReconciliationRows',
} as const;

export type BusinessMetric = (typeof BUSINESS_METRICS)[keyof typeof BUSINESS_METRICS];

const metrics = new Metrics({ namespace: metricsNamespace(), serviceName: METRICS_SERVICE });

export function recordMetric(
  name: BusinessMetric,
  value: number,
  dimensions: Readonly<Record<string, string>> = {},
  unit: 'Count' | 'Seconds' = 'Count',
): void {
  const single = metrics.singleMetric();
  for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
  single.addMetric(name, unit === 'Count' ? MetricUnit.Count : MetricUnit.Seconds, value);
}
