import { BUSINESS_METRICS, type BusinessMetric, METRICS_SERVICE, metricsNamespace } from '@svc/core';
import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { AlarmConfig } from '../config/stages';
import { thresholdAlarm } from './service-alarms';

export interface OperationsAlarmsProps {
  /** The stage: its business metrics' namespace (`svc/<stage>`). */
  stage: string;
  alarms: AlarmConfig;
  api: IHttpApi;
  table: ITable;
  /** Work queues whose oldest message must not wait long (billing, reconciliation files, deliveries). */
  queues: Readonly<Record<string, IQueue>>;
  /** Every function, by its readable name: a throttled one drops or delays work. */
  functions: Readonly<Record<string, IFunction>>;
  /** The billing run, which must run at least once in BILLING_HEARTBEAT. */
  billingRun: IFunction;
  /** The stream publisher: how far behind the table's stream it reads. */
  streamPublisher: IFunction;
}

const PERIOD = Duration.minutes(5);
/** A queue's oldest message this old means its worker is stuck or failing. */
export const QUEUE_AGE_ALARM = Duration.minutes(15);
/** Events published this late after their write: the stream publisher falls behind. */
export const STREAM_AGE_ALARM = Duration.minutes(5);
/** Outcome rates are judged over this window, and only with at least RATE_MINIMUM outcomes in it. */
export const RATE_WINDOW = Duration.minutes(30);
export const RATE_MINIMUM = 20;

/** A business metric a stage's functions print as EMF (@svc/core metrics), summed over `period`. */
export function businessMetric(
  stage: string,
  name: BusinessMetric,
  dimensions: Record<string, string> = {},
  period: Duration = PERIOD,
  statistic = 'Sum',
): Metric {
  return new Metric({
    namespace: metricsNamespace(stage),
    metricName: name,
    dimensionsMap: { service: METRICS_SERVICE, ...dimensions },
    period,
    statistic,
  });
}

/**
 * The reasons a provider's callback is refused (ProviderCallbacksRefused), by their ids in
 * REFUSALS_EXPRESSION: the same for both providers (Stripe never has `basic_auth`).
 */
export const REFUSAL_REASONS = { s: 'signature', b: 'basic_auth', k: 'no_key' } as const;
/**
 * Every reason's refusals, summed: each filled with 0 where it has no data, or one reason alone
 * (the usual case) would leave the sum missing and the alarm quiet (metric math: arithmetic with a
 * missing value is missing; "FILL(m, value) fills the missing values of a time series",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
 */
export const REFUSALS_EXPRESSION = Object.keys(REFUSAL_REASONS)
  .map((id) => `FILL(${id}, 0)`)
  .join(' + ');

/**
 * A webhook delivery waiting in the table this long (WebhookBacklogAge, the sweeper's oldest), or
 * an event waiting this long for its first attempt (EventToDeliveryLag): as for a queue's oldest
 * message (QUEUE_AGE_ALARM), a receiver 15 minutes behind is told of.
 */
export const WEBHOOK_BACKLOG_AGE_ALARM = Duration.minutes(15);
export const WEBHOOK_LAG_ALARM = Duration.minutes(15);

/** The billing run starts every 15 minutes: none in an hour means the schedule or the run is broken. */
export const BILLING_HEARTBEAT = Duration.hours(1);

/**
 * The alarms that tell of work piling up or not happening, beside ServiceAlarms' errors: queue
 * ages, throttles (Lambda and DynamoDB), DynamoDB's own errors, API latency, the event stream's
 * lag, and a heartbeat of the billing run (no run is an alarm: missing data breaches).
 */
/** Functions whose throttles one alarm watches (a metric math alarm's most). */
export const THROTTLE_ALARM_FUNCTIONS = 10;

export class OperationsAlarms extends Construct {
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    for (const [name, queue] of Object.entries(props.queues)) {
      this.alarms.push(
        thresholdAlarm(
          this,
          `QueueAge-${name}`,
          queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }),
          QUEUE_AGE_ALARM.toSeconds(),
          `The oldest ${name} message waited (seconds)`,
        ),
      );
    }
    // Throttles of every function, ten functions an alarm: a metric math alarm takes at most ten
    // metrics ("Alarms based on metric math expressions can reference a maximum of 10 metrics",
    // https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-limits.html). One alarm
    // per function cost a CloudFormation resource each, of the 500 a stack may hold.
    const functions = Object.entries(props.functions);
    for (let start = 0; start < functions.length; start += THROTTLE_ALARM_FUNCTIONS) {
      const group = functions.slice(start, start + THROTTLE_ALARM_FUNCTIONS);
      const names = group.map(([name]) => name);
      this.alarms.push(
        thresholdAlarm(
          this,
          `Throttles-${start / THROTTLE_ALARM_FUNCTIONS}`,
          new MathExpression({
            expression: group.map((_, index) => `FILL(t${index}, 0)`).join(' + '),
            usingMetrics: Object.fromEntries(
              group.map(([, fn], index) => [`t${index}`, fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })]),
            ),
            period: PERIOD,
            label: `Throttles of ${names.join(', ')}`,
          }),
          1,
          `One of these functions was throttled: ${names.join(', ')} (the dashboard shows which)`,
        ),
      );
    }
    const tableName = props.table.tableName;
    for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      this.alarms.push(
        thresholdAlarm(
          this,
          `Table${metricName}`,
          new Metric({
            namespace: 'AWS/DynamoDB',
            metricName,
            dimensionsMap: { TableName: tableName },
            period: PERIOD,
            statistic: 'Sum',
          }),
          1,
          `DynamoDB throttled the table (${metricName})`,
        ),
      );
    }
    this.alarms.push(
      new Alarm(this, 'TableSystemErrors', {
        metric: props.table.metricSystemErrorsForOperations({
          operations: [
            Operation.GET_ITEM,
            Operation.BATCH_GET_ITEM,
            Operation.PUT_ITEM,
            Operation.UPDATE_ITEM,
            Operation.DELETE_ITEM,
            Operation.QUERY,
            Operation.BATCH_WRITE_ITEM,
            Operation.TRANSACT_WRITE_ITEMS,
          ],
          period: PERIOD,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: 'DynamoDB answered 5xx (SystemErrors): at least 1 in 5 minutes',
      }),
    );
    this.alarms.push(
      thresholdAlarm(
        this,
        'ApiLatencyP99',
        props.api.metricLatency({ period: PERIOD, statistic: 'p99' }),
        props.alarms.apiP99LatencyMs,
        'The API’s p99 latency (ms) was high',
      ),
      thresholdAlarm(
        this,
        'StreamPublisherIteratorAge',
        new Metric({
          namespace: 'AWS/Lambda',
          metricName: 'IteratorAge',
          dimensionsMap: { FunctionName: props.streamPublisher.functionName },
          period: PERIOD,
          statistic: 'Maximum',
        }),
        STREAM_AGE_ALARM.toMilliseconds(),
        'Events are published late: the stream publisher’s iterator age (ms) was high',
      ),
      rateAlarm(
        this,
        'LivePaymentDeclineRate',
        businessMetric(props.stage, BUSINESS_METRICS.paymentOutcomes, { outcome: 'failed', mode: 'live' }, RATE_WINDOW),
        businessMetric(
          props.stage,
          BUSINESS_METRICS.paymentOutcomes,
          { outcome: 'succeeded', mode: 'live' },
          RATE_WINDOW,
        ),
        props.alarms.declineRate,
        'Live payments failing',
      ),
      rateAlarm(
        this,
        'ChargeAttemptFailureRate',
        businessMetric(props.stage, BUSINESS_METRICS.chargeAttemptsFailed, {}, RATE_WINDOW),
        businessMetric(props.stage, BUSINESS_METRICS.invoicesPaid, {}, RATE_WINDOW),
        props.alarms.chargeFailureRate,
        'Billing-run charge attempts failing',
      ),
      // Each one needs a person at once: a donor paid for a payment we had failed (refund or keep,
      // and tell them), or Stripe refused our key or a connected account (no payment can be taken).
      ...(
        [
          'succeeded_after_failure',
          'access_refused',
          'paid_at_other_provider',
          'unrecorded_payment',
          'cancelled_after_success',
          'callback_unbound',
          'unknown_result',
          'unusable_notification',
          'capture_failed',
        ] as const
      ).map(
        (kind) =>
          new Alarm(this, `ProviderAnomaly-${kind}`, {
            metric: businessMetric(props.stage, BUSINESS_METRICS.providerAnomalies, { kind }, PERIOD),
            threshold: 1,
            evaluationPeriods: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: TreatMissingData.NOT_BREACHING,
            alarmDescription:
              kind === 'succeeded_after_failure'
                ? 'A payment recorded as failed was paid at the provider after all (recorded as succeeded): check with the donor'
                : kind === 'paid_at_other_provider'
                  ? 'A provider reports paid a payment recorded at another provider: the donor may have paid twice, refund one'
                  : kind === 'unrecorded_payment'
                    ? 'Adyen took money for a payment of ours never recorded (its request died and was not retried): record or refund it'
                    : kind === 'cancelled_after_success'
                      ? 'Adyen cancelled a payment recorded as paid: the donor has not paid; correct the record'
                      : kind === 'callback_unbound'
                        ? 'A provider callback named a payment its account, mode or reference does not hold (ignored): find who sent it (logs: callback_unbound)'
                        : kind === 'unknown_result'
                          ? 'Adyen answered a result code we do not act on (e.g. PartiallyAuthorised): the payment is resolved as an unknown outcome; check it at Adyen'
                          : kind === 'unusable_notification'
                            ? 'A correctly signed Adyen notification item could not be used (acknowledged so it does not hold the queue): read it in the logs and apply it by hand'
                            : kind === 'capture_failed'
                              ? 'Adyen did not capture a payment recorded as paid (CAPTURE_FAILED or EXPIRE): it is failed now; tell the charity, the donor was not charged'
                              : 'The payment provider refused the platform’s key or a connected account: payments on it fail',
          }),
      ),
      // A provider's circuit opened: new payments go to the route's next candidate (or wait on it).
      ...(['stripe', 'adyen'] as const).map(
        (provider) =>
          new Alarm(this, `ProviderCircuitOpen-${provider}`, {
            metric: businessMetric(
              props.stage,
              BUSINESS_METRICS.providerCircuitChanges,
              { provider, state: 'open' },
              PERIOD,
            ),
            threshold: 1,
            evaluationPeriods: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: TreatMissingData.NOT_BREACHING,
            alarmDescription: `The ${provider} circuit opened after repeated timeouts, 5xx or refused connections: its new payments go to the route's next provider (pnpm ops providers:status)`,
          }),
      ),
      // A provider's callbacks refused (its events or notifications, not applied): a key rolled at
      // the provider and not in the secret, or someone knocking on the endpoint. Both providers
      // alike, every reason summed.
      ...(['stripe', 'adyen'] as const).map(
        (provider) =>
          new Alarm(this, `ProviderCallbacksRefused-${provider}`, {
            metric: new MathExpression({
              expression: REFUSALS_EXPRESSION,
              usingMetrics: Object.fromEntries(
                Object.entries(REFUSAL_REASONS).map(([id, reason]) => [
                  id,
                  businessMetric(props.stage, BUSINESS_METRICS.providerCallbacksRefused, { provider, reason }, PERIOD),
                ]),
              ),
              period: PERIOD,
              label: `${provider} callbacks refused`,
            }),
            threshold: props.alarms.functionErrors,
            evaluationPeriods: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: TreatMissingData.NOT_BREACHING,
            alarmDescription: `${provider === 'stripe' ? 'Stripe event deliveries' : 'Adyen notifications'} were refused (bad signature, bad basic auth or no key configured): at least ${props.alarms.functionErrors} in ${PERIOD.toMinutes()} minutes; a key rolled at ${provider === 'stripe' ? 'Stripe' : 'Adyen'} and not in the secret (pnpm ops stripe:configure), or someone knocking (logs: reason)`,
          }),
      ),
      // Webhook deliveries waiting in the table (paced, paused, retried), which no queue age sees:
      // the oldest wait the sweeper found. The sweeper reports every minute, so no data is a
      // sweeper not running (or failing before it reports), which is what this alarm is for too.
      new Alarm(this, 'WebhookBacklogAge', {
        metric: businessMetric(props.stage, BUSINESS_METRICS.webhookBacklogAge, {}, PERIOD, 'Maximum'),
        threshold: WEBHOOK_BACKLOG_AGE_ALARM.toSeconds(),
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.BREACHING,
        alarmDescription: `Webhook deliveries wait in the table: the oldest waited at least ${WEBHOOK_BACKLOG_AGE_ALARM.toMinutes()} minutes (seconds, WebhookBacklogAge), or the delivery sweeper did not report for ${PERIOD.toMinutes()} minutes`,
      }),
      thresholdAlarm(
        this,
        'WebhookDeliveryLag',
        businessMetric(props.stage, BUSINESS_METRICS.eventToDeliveryLag, {}, PERIOD, 'Maximum'),
        WEBHOOK_LAG_ALARM.toSeconds(),
        'Webhook events reach their endpoints late: the longest wait from an event to its first attempt or hold (seconds, EventToDeliveryLag)',
      ),
      new Alarm(this, 'BillingRunHeartbeat', {
        metric: props.billingRun.metricInvocations({ period: BILLING_HEARTBEAT, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        // No data is no run: exactly what this alarm is for.
        treatMissingData: TreatMissingData.BREACHING,
        alarmDescription: `The billing run did not run in ${BILLING_HEARTBEAT.toHours()} hour(s)`,
      }),
    );
  }
}

/**
 * The failing share, each input filled with 0 where it has no data: in a total outage the
 * successes have no data at all, and `f / (f + o)` over a missing `o` would be missing too, so
 * the alarm could never fire when it matters most (metric math: "FILL(m, value) fills the missing
 * values of a time series", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
 */
export const RATE_EXPRESSION = `IF((FILL(f, 0) + FILL(o, 0)) >= ${RATE_MINIMUM}, FILL(f, 0) / (FILL(f, 0) + FILL(o, 0)), 0)`;

/**
 * `failed / (failed + other)` over RATE_WINDOW at or above `rate`, judged only once RATE_MINIMUM
 * outcomes happened in the window (a quiet hour with two declines out of three pages nobody).
 */
function rateAlarm(scope: Construct, id: string, failed: Metric, other: Metric, rate: number, what: string): Alarm {
  return new Alarm(scope, id, {
    metric: new MathExpression({
      expression: RATE_EXPRESSION,
      usingMetrics: { f: failed, o: other },
      period: RATE_WINDOW,
      label: `${what} (share)`,
    }),
    threshold: rate,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: `${what}: at least ${Math.round(rate * 100)}% of ${RATE_MINIMUM}+ outcomes in ${RATE_WINDOW.toMinutes()} minutes`,
  });
}
