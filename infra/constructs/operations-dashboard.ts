import { BUSINESS_METRICS, METRICS_SERVICE, metricsNamespace } from '@svc/core';
import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageName } from '../config/stages';
import { businessMetric } from './operations-alarms';

export interface OperationsDashboardProps {
  stage: StageName;
  api: IHttpApi;
  table: ITable;
  /** Every function, by its readable name. */
  functions: Readonly<Record<string, IFunction>>;
  /** Work queues, by name: how much waits and for how long. */
  queues: Readonly<Record<string, IQueue>>;
  /** The stack's alarms (none on stages without alarms). */
  alarms: readonly Alarm[];
}

const PERIOD = Duration.minutes(5);

/**
 * One CloudWatch dashboard per stage (`svc-<stage>`): the alarms' states first, then the API
 * (requests, 5xx, p50/p99 latency), the business (payments by outcome and method, refunds,
 * billing and dunning, webhook deliveries and their lag, reconciliation rows), every function (errors, throttles, p99 duration), the work
 * queues (depth and oldest message) and the table (consumed capacity, throttles, system errors).
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `svc-${props.stage}`,
      defaultInterval: Duration.hours(3),
    });
    const functions = Object.entries(props.functions);
    const labelled = (name: string, metric: Metric) => metric.with({ label: name });

    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# svc ${props.stage}\nAlarms, the API, every function, the work queues and the table. Traces: X-Ray (every function traces actively).`,
        width: 24,
        height: 2,
      }),
    );
    if (props.alarms.length > 0) {
      this.dashboard.addWidgets(
        new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 24, height: 6 }),
      );
    }
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'API requests and 5xx',
        left: [props.api.metricCount({ period: PERIOD, statistic: 'Sum' })],
        right: [props.api.metricServerError({ period: PERIOD, statistic: 'Sum' })],
        width: 12,
      }),
      new GraphWidget({
        title: 'API latency (ms)',
        left: [
          props.api.metricLatency({ period: PERIOD, statistic: 'p50' }),
          props.api.metricLatency({ period: PERIOD, statistic: 'p99' }),
        ],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Function errors',
        left: functions.map(([name, fn]) => labelled(name, fn.metricErrors({ period: PERIOD, statistic: 'Sum' }))),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function throttles',
        left: functions.map(([name, fn]) => labelled(name, fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }))),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function duration p99 (ms)',
        left: functions.map(([name, fn]) => labelled(name, fn.metricDuration({ period: PERIOD, statistic: 'p99' }))),
        width: 8,
      }),
    );
    // The business, from the EMF metrics the functions print (@svc/core metrics).
    const outcomes = ['succeeded', 'failed', 'cancelled'];
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Live payments by outcome',
        left: outcomes.map((outcome) =>
          labelled(outcome, businessMetric(props.stage, BUSINESS_METRICS.paymentOutcomes, { outcome, mode: 'live' })),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Live payments by method and outcome',
        left: [
          new MathExpression({
            expression: `SEARCH('{${metricsNamespace(props.stage)},service,outcome,mode,payment_method} MetricName="${BUSINESS_METRICS.paymentOutcomesByMethod}" service="${METRICS_SERVICE}" mode="live"', 'Sum', 300)`,
            label: '',
            period: PERIOD,
          }),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Refunds, billing and dunning',
        left: [
          labelled('refunds', businessMetric(props.stage, BUSINESS_METRICS.refunds)),
          labelled('invoices paid', businessMetric(props.stage, BUSINESS_METRICS.invoicesPaid)),
          labelled('charge attempts failed', businessMetric(props.stage, BUSINESS_METRICS.chargeAttemptsFailed)),
          labelled('subscriptions suspended', businessMetric(props.stage, BUSINESS_METRICS.subscriptionsSuspended)),
        ],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        // `paced`: held back by the endpoint's pace; `throttled`: the endpoint answered 429 (or 503
        // with Retry-After). Both wait, neither fails (services/webhooks/src/domain/pacing.ts).
        title: 'Webhook deliveries by outcome',
        left: ['delivered', 'failed', 'gone', 'paced', 'throttled'].map((outcome) =>
          labelled(outcome, businessMetric(props.stage, BUSINESS_METRICS.webhookDeliveries, { outcome })),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Event to first attempt or hold (s); webhook backlog',
        left: [
          ...['p50', 'p99', 'Maximum'].map((statistic) =>
            labelled(
              `lag ${statistic}`,
              businessMetric(props.stage, BUSINESS_METRICS.eventToDeliveryLag, {}, PERIOD, statistic),
            ),
          ),
          labelled(
            'backlog oldest',
            businessMetric(props.stage, BUSINESS_METRICS.webhookBacklogAge, {}, PERIOD, 'Maximum'),
          ),
        ],
        right: [labelled('backlog (swept)', businessMetric(props.stage, BUSINESS_METRICS.webhookBacklog))],
        width: 8,
      }),
      new GraphWidget({
        title: 'Reconciliation rows',
        left: ['matched', 'unmatched', 'error'].map((result) =>
          labelled(result, businessMetric(props.stage, BUSINESS_METRICS.reconciliationRows, { result })),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Provider anomalies (each needs a person)',
        left: [
          'succeeded_after_failure',
          'access_refused',
          'paid_at_other_provider',
          'unrecorded_payment',
          'cancelled_after_success',
          'callback_unbound',
          'unknown_result',
          'unusable_notification',
          'capture_failed',
        ].map((kind) => labelled(kind, businessMetric(props.stage, BUSINESS_METRICS.providerAnomalies, { kind }))),
        width: 8,
      }),
      new GraphWidget({
        title: 'Provider circuits opened, and payments passed over',
        left: (['stripe', 'adyen'] as const).map((provider) =>
          labelled(
            `${provider} opened`,
            businessMetric(props.stage, BUSINESS_METRICS.providerCircuitChanges, { provider, state: 'open' }),
          ),
        ),
        right: [
          new MathExpression({
            label: 'passed over',
            expression: `SEARCH('{${metricsNamespace(props.stage)},service,provider,reason} MetricName="${BUSINESS_METRICS.providerFailovers}" service="${METRICS_SERVICE}"', 'Sum', ${PERIOD.toSeconds()})`,
            period: PERIOD,
          }),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Provider callbacks refused (signature, basic auth, no key)',
        left: [
          new MathExpression({
            label: 'refused',
            expression: `SEARCH('{${metricsNamespace(props.stage)},service,provider,reason} MetricName="${BUSINESS_METRICS.providerCallbacksRefused}" service="${METRICS_SERVICE}"', 'Sum', ${PERIOD.toSeconds()})`,
            period: PERIOD,
          }),
        ],
        width: 8,
      }),
    );
    // Mail (@svc/mail): sent and failed sends by template and SES error, and what the sweeper
    // found unsent past its due time (alarmed in infra/constructs/mail.ts).
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Mail sent, sends failed (by SES error); unsent (s, oldest)',
        left: [
          new MathExpression({
            label: 'sent',
            expression: `SEARCH('{${metricsNamespace(props.stage)},service,template} MetricName="${BUSINESS_METRICS.mailsSent}" service="${METRICS_SERVICE}"', 'Sum', ${PERIOD.toSeconds()})`,
            period: PERIOD,
          }),
          new MathExpression({
            label: 'failed',
            expression: `SEARCH('{${metricsNamespace(props.stage)},service,reason} MetricName="${BUSINESS_METRICS.mailSendFailures}" service="${METRICS_SERVICE}"', 'Sum', ${PERIOD.toSeconds()})`,
            period: PERIOD,
          }),
          labelled('unsent (swept)', businessMetric(props.stage, BUSINESS_METRICS.mailUnsent)),
        ],
        right: [
          labelled('unsent oldest', businessMetric(props.stage, BUSINESS_METRICS.mailUnsentAge, {}, PERIOD, 'Maximum')),
        ],
        width: 8,
      }),
    );
    const queues = Object.entries(props.queues);
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Queue depth (visible messages)',
        left: queues.map(([name, queue]) =>
          labelled(name, queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' })),
        ),
        width: 12,
      }),
      new GraphWidget({
        title: 'Oldest message (s)',
        left: queues.map(([name, queue]) =>
          labelled(name, queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' })),
        ),
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Table consumed capacity',
        left: [
          props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum' }),
          props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum' }),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Table throttles and system errors',
        left: ['ReadThrottleEvents', 'WriteThrottleEvents', 'SystemErrors'].map(
          (metricName) =>
            new Metric({
              namespace: 'AWS/DynamoDB',
              metricName,
              dimensionsMap: { TableName: props.table.tableName },
              period: PERIOD,
              statistic: 'Sum',
            }),
        ),
        width: 12,
      }),
    );
  }
}
