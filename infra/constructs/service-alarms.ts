import { metricsNamespace } from '@svc/core';
import { UNHANDLED_ERROR_MESSAGE } from '@svc/http';
import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  type MathExpression,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { AlarmConfig } from '../config/stages';

export interface ServiceAlarmsProps {
  /** The stage: its metrics' namespace (`svc/<stage>`). */
  stage: string;
  alarms: AlarmConfig;
  api: IHttpApi;
  /** Functions to watch, by a readable name (the domain). */
  functions: Readonly<Record<string, IFunction>>;
  /** Each route group (a domain and its one function): its 500s and its latency. */
  routeGroups: Readonly<Record<string, { fn: IFunction; logs: ILogGroup }>>;
}

const PERIOD = Duration.minutes(5);

/**
 * Errors the caller sees (the API's 5xx) and errors per function, so an alarm names the domain.
 * Missing data is fine: no traffic is no failure.
 */
export class ServiceAlarms extends Construct {
  readonly apiServerErrors: Alarm;
  readonly functionErrors: Alarm[];
  /** Per route group: requests that ended in a 500, and the function's p99 duration. */
  readonly routeGroupAlarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    this.apiServerErrors = this.alarm(
      'ApiServerErrors',
      props.api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
      props.alarms.apiServerErrors,
      'API Gateway answered 5xx',
    );
    // Refused provider callbacks (Stripe's and Adyen's alike) are alarmed in OperationsAlarms.
    // Per route group: the API's 5xx and latency name no domain, so each domain's own 500s (the
    // error mapper logs each) and its function's p99 duration (the API's latency less the gateway's).
    for (const [group, { fn, logs }] of Object.entries(props.routeGroups)) {
      const unhandled = new MetricFilter(this, `UnhandledErrorsFilter-${group}`, {
        logGroup: logs,
        filterPattern: FilterPattern.stringValue('$.message', '=', UNHANDLED_ERROR_MESSAGE),
        metricNamespace: metricsNamespace(props.stage),
        metricName: 'UnhandledErrors',
        dimensions: { route_group: '$.service' },
        metricValue: '1',
      });
      this.routeGroupAlarms.push(
        this.alarm(
          `RouteGroupServerErrors-${group}`,
          unhandled.metric({ period: PERIOD, statistic: 'Sum', dimensionsMap: { route_group: group } }),
          props.alarms.apiServerErrors,
          `The ${group} routes answered 500 (unhandled errors)`,
        ),
        this.alarm(
          `RouteGroupLatencyP99-${group}`,
          fn.metricDuration({ period: PERIOD, statistic: 'p99' }),
          props.alarms.apiP99LatencyMs,
          `The ${group} routes were slow: their function's p99 duration (ms)`,
        ),
      );
    }
    this.functionErrors = Object.entries(props.functions).map(([name, fn]) =>
      this.alarm(
        `FunctionErrors-${name}`,
        fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        props.alarms.functionErrors,
        `The ${name} function threw or timed out`,
      ),
    );
  }

  private alarm(id: string, metric: Metric, threshold: number, what: string): Alarm {
    return thresholdAlarm(this, id, metric, threshold, what);
  }
}

/**
 * This repo's alarm shape: one period, breaching at `threshold` or more, and quiet on missing
 * data (no traffic is no failure). The description names what happened and the metric's period.
 */
export function thresholdAlarm(
  scope: Construct,
  id: string,
  metric: Metric | MathExpression,
  threshold: number,
  what: string,
): Alarm {
  return new Alarm(scope, id, {
    metric,
    threshold,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: `${what}: at least ${threshold} in ${metric.period.toMinutes()} minutes`,
  });
}
