import { BUSINESS_METRICS } from '@svc/core';
import { UNHANDLED_ERROR_MESSAGE } from '@svc/http';
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { AlarmTopic } from '../constructs/alarm-topic';
import { domainNames } from '../constructs/domain-function';
import {
  BILLING_HEARTBEAT,
  QUEUE_AGE_ALARM,
  RATE_EXPRESSION,
  STREAM_AGE_ALARM,
  THROTTLE_ALARM_FUNCTIONS,
} from '../constructs/operations-alarms';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService } from './support/template-model';

useSynthesizedApp();

type Resource = { Type: string; Properties?: Record<string, unknown> };
const resourcesOfType = (template: Template, type: string) =>
  Object.entries(template.toJSON().Resources as Record<string, Resource>).filter(([, r]) => r.Type === type);

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('alarms in the %s stage', (stage) => {
  it('all notify the stage’s alarm topic when they fire and when they recover', () => {
    const template = templateOf(stage);
    const topics = resourcesOfType(template, 'AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    const [topicId, topic] = topics[0] ?? [];
    expect(topic?.Properties?.KmsMasterKeyId).toBeDefined();
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(20);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions, id).toContainEqual({ Ref: topicId });
      expect(alarm.Properties?.OKActions, id).toContainEqual({ Ref: topicId });
    }
  });

  it('keeps the topic HTTPS-only and lets CloudWatch use its key', () => {
    const template = templateOf(stage);
    const policies = resourcesOfType(template, 'AWS::SNS::TopicPolicy');
    expect(JSON.stringify(policies)).toContain('"aws:SecureTransport":"false"');
    const keys = resourcesOfType(template, 'AWS::KMS::Key').filter(([, key]) =>
      String(key.Properties?.Description).startsWith('svc fundraising alarm topic'),
    );
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys[0]?.[1].Properties?.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))(
  'operations alarms in the %s stage',
  (stage) => {
    const alarms = () =>
      resourcesOfType(templateOf(stage), 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
    const described = (start: string) => alarms().filter((alarm) => String(alarm.AlarmDescription).startsWith(start));

    it('watch the age of the oldest message of every work queue', () => {
      const ages = alarms().filter((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage');
      // Billing, reconciliation files and receipts here; the delivery and fan-out queues' in Events.
      expect(ages).toHaveLength(5);
      expect(described('The oldest billing message').map((a) => a.Threshold)).toEqual([QUEUE_AGE_ALARM.toSeconds()]);
      expect(described('The oldest reconciliation-files message')).toHaveLength(1);
    });

    it('watch throttling of every function of ours and of the table, and DynamoDB’s own errors', () => {
      const functions = functionsByService(templateOf(stage));
      // Ten functions an alarm (a metric math alarm's most), each function's throttles summed.
      const throttled = alarms().flatMap((alarm) =>
        ((alarm.Metrics as Array<{ MetricStat?: { Metric: { MetricName: string } } }> | undefined) ?? []).filter(
          (query) => query.MetricStat?.Metric.MetricName === 'Throttles',
        ),
      );
      // Every function but the one-off ones (signing-key bootstrap, schema migrator).
      expect(throttled.length).toBe(functions.size - 2);
      expect(described('One of these functions was throttled').length).toBe(
        Math.ceil((functions.size - 2) / THROTTLE_ALARM_FUNCTIONS),
      );
      for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        expect(
          alarms().filter((alarm) => alarm.MetricName === metricName),
          metricName,
        ).toHaveLength(1);
      }
      expect(described('DynamoDB answered 5xx')).toHaveLength(1);
    });

    it('watch the API’s p99 latency and the event stream’s lag', () => {
      const latency = alarms().filter((alarm) => alarm.MetricName === 'Latency');
      expect(latency).toEqual([
        expect.objectContaining({ ExtendedStatistic: 'p99', Threshold: STAGES[stage].alarms.apiP99LatencyMs }),
      ]);
      expect(described('Events are published late')).toEqual([
        expect.objectContaining({ MetricName: 'IteratorAge', Threshold: STREAM_AGE_ALARM.toMilliseconds() }),
      ]);
    });

    it('watch every route group (domain) for 500s, counted from its log, and for its p99 latency', () => {
      const template = templateOf(stage);
      const filters = resourcesOfType(template, 'AWS::Logs::MetricFilter').filter(
        ([, filter]) =>
          (filter.Properties?.MetricTransformations as Array<{ MetricName: string }> | undefined)?.[0]?.MetricName ===
          'UnhandledErrors',
      );
      expect(filters).toHaveLength(domainNames().length);
      for (const [, filter] of filters) {
        expect(filter.Properties?.FilterPattern).toBe(`{ $.message = "${UNHANDLED_ERROR_MESSAGE}" }`);
        expect(filter.Properties?.MetricTransformations).toEqual([
          // The stage's own namespace: another stage in the account never feeds these alarms.
          expect.objectContaining({
            MetricNamespace: `svc/${stage}`,
            Dimensions: [{ Key: 'route_group', Value: '$.service' }],
          }),
        ]);
      }
      for (const domain of domainNames()) {
        expect(described(`The ${domain} routes answered 500`), domain).toEqual([
          expect.objectContaining({
            MetricName: 'UnhandledErrors',
            Dimensions: [{ Name: 'route_group', Value: domain }],
            Threshold: STAGES[stage].alarms.apiServerErrors,
          }),
        ]);
        expect(described(`The ${domain} routes were slow`), domain).toEqual([
          expect.objectContaining({
            MetricName: 'Duration',
            ExtendedStatistic: 'p99',
            Threshold: STAGES[stage].alarms.apiP99LatencyMs,
          }),
        ]);
      }
      // Each domain's log lines name it as `service`, the filter's dimension.
      for (const fn of functionsByService(template).values())
        expect(fn.properties.Environment.Variables).toHaveProperty('POWERTOOLS_SERVICE_NAME');
    });

    it('alarm at the first provider callback that names what its sender does not hold (issue 44)', () => {
      const found = described('A provider callback named a payment');
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        Namespace: `svc/${stage}`,
        MetricName: BUSINESS_METRICS.providerAnomalies,
        Dimensions: expect.arrayContaining([{ Name: 'kind', Value: 'callback_unbound' }]),
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    });

    it('alarm at the first answer Adyen gives that we cannot act on, and at the first signed item we cannot use (issue 45)', () => {
      for (const [description, kind] of [
        ['Adyen answered a result code we do not act on', 'unknown_result'],
        ['A correctly signed Adyen notification item could not be used', 'unusable_notification'],
        ['Adyen did not capture a payment recorded as paid', 'capture_failed'],
      ] as const) {
        const found = described(description);
        expect(found).toHaveLength(1);
        expect(found[0]).toMatchObject({
          MetricName: BUSINESS_METRICS.providerAnomalies,
          Dimensions: expect.arrayContaining([{ Name: 'kind', Value: kind }]),
          Threshold: 1,
        });
      }
    });

    it('alarm on the share of live payments and of charge attempts that fail, once enough happened', () => {
      const rate = (what: string) => {
        const found = described(what);
        expect(found, what).toHaveLength(1);
        return found[0] as Record<string, unknown> & { Metrics: Array<Record<string, unknown>> };
      };
      const declines = rate('Live payments failing');
      expect(declines.Threshold).toBe(STAGES[stage].alarms.declineRate);
      const expression = declines.Metrics.find((m) => m.Expression)?.Expression;
      expect(expression).toBe(RATE_EXPRESSION);
      const inputs = Object.fromEntries(
        declines.Metrics.filter((m) => m.MetricStat).map((m) => [
          m.Id,
          (m.MetricStat as { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] } }).Metric,
        ]),
      );
      expect(inputs.f).toEqual({
        Namespace: `svc/${stage}`,
        MetricName: 'PaymentOutcomes',
        Dimensions: expect.arrayContaining([
          { Name: 'service', Value: 'svc' },
          { Name: 'outcome', Value: 'failed' },
          { Name: 'mode', Value: 'live' },
        ]),
      });
      expect((inputs.o as { Dimensions: unknown[] }).Dimensions).toContainEqual({
        Name: 'outcome',
        Value: 'succeeded',
      });
      const charges = rate('Billing-run charge attempts failing');
      expect(charges.Threshold).toBe(STAGES[stage].alarms.chargeFailureRate);
      expect(JSON.stringify(charges.Metrics)).toContain('"MetricName":"ChargeAttemptsFailed"');
      expect(JSON.stringify(charges.Metrics)).toContain('"MetricName":"InvoicesPaid"');
    });

    it('alarm when the billing run did not run, missing data counting as no run', () => {
      expect(described('The billing run did not run')).toEqual([
        expect.objectContaining({
          MetricName: 'Invocations',
          Period: BILLING_HEARTBEAT.toSeconds(),
          ComparisonOperator: 'LessThanThreshold',
          Threshold: 1,
          TreatMissingData: 'breaching',
        }),
      ]);
    });
  },
);

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('the %s stage without alarms', (stage) => {
  it('has no alarm topic', () => {
    expect(resourcesOfType(templateOf(stage), 'AWS::SNS::Topic')).toEqual([]);
  });
});

describe('the alarm topic', () => {
  it('subscribes the configured e-mail addresses and notifies configured topics directly', () => {
    const stack = new Stack();
    const alarm = new Alarm(stack, 'Probe', {
      metric: new Metric({ namespace: 'svc', metricName: 'probe', period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    const pager = 'arn:aws:sns:eu-central-2:123456789012:pager';
    const topic = new AlarmTopic(stack, 'AlarmTopic', {
      stage: {
        ...STAGES.prod,
        alarms: { ...STAGES.prod.alarms, notify: { emails: ['ops@example.org'], topicArns: [pager] } },
      },
    });
    expect(topic.notifyFrom(stack)).toEqual([alarm]);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.org' });
    const [, probe] = resourcesOfType(template, 'AWS::CloudWatch::Alarm')[0] ?? [];
    expect(probe?.Properties?.AlarmActions).toEqual([expect.objectContaining({ Ref: expect.any(String) }), pager]);
    expect(probe?.Properties?.OKActions).toEqual([expect.objectContaining({ Ref: expect.any(String) }), pager]);
  });
});

describe.each(STAGE_NAMES)('the %s dashboard', (stage) => {
  /** The dashboard body with its tokens' logical ids kept: Fn::Join parts joined, Refs as {Ref:Id}. */
  function dashboardBody(): string {
    const dashboards = resourcesOfType(templateOf(stage), 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const [, dashboard] = dashboards[0] ?? [];
    expect(dashboard?.Properties?.DashboardName).toBe(`svc-${stage}`);
    const body = dashboard?.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] };
    return body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
  }

  it('shows the API, every function, the work queues and the table', () => {
    const body = dashboardBody();
    for (const title of [
      'API requests and 5xx',
      'API latency (ms)',
      'Function errors',
      'Function throttles',
      'Function duration p99 (ms)',
      'Queue depth (visible messages)',
      'Oldest message (s)',
      'Table throttles and system errors',
      'Live payments by outcome',
      'Live payments by method and outcome',
      'Refunds, billing and dunning',
      'Webhook deliveries by outcome',
      'Event to first attempt or hold (s); webhook backlog',
      'Provider callbacks refused (signature, basic auth, no key)',
      'Reconciliation rows',
    ])
      expect(body, title).toContain(`"title":"${title}"`);
    // Every business metric the functions print is on it, under the names they print.
    for (const name of Object.values(BUSINESS_METRICS)) expect(body, name).toContain(name);
    for (const fn of functionsByService(templateOf(stage)).values())
      expect(body, fn.logicalId).toContain(`{"Ref":"${fn.logicalId}"}`);
  });

  it('reads only its own stage’s metrics, as its alarms do', () => {
    const body = dashboardBody();
    for (const other of STAGE_NAMES.filter((name) => name !== stage)) expect(body).not.toContain(`svc/${other}`);
    expect(body).toContain(`svc/${stage}`);
    const namespaces = resourcesOfType(templateOf(stage), 'AWS::CloudWatch::Alarm').flatMap(([, alarm]) => {
      const properties = alarm.Properties as {
        Namespace?: string;
        Metrics?: Array<{ MetricStat?: { Metric: { Namespace: string } } }>;
      };
      return [properties.Namespace, ...(properties.Metrics ?? []).map((m) => m.MetricStat?.Metric.Namespace)];
    });
    const ours = namespaces.filter((namespace): namespace is string => namespace?.startsWith('svc') ?? false);
    expect(new Set(ours)).toEqual(new Set(STAGES[stage].alarms.enabled ? [`svc/${stage}`] : []));
  });

  it(STAGES[stage].alarms.enabled ? "shows every alarm's state" : 'has no alarms to show', () => {
    const body = dashboardBody();
    const alarms = resourcesOfType(templateOf(stage), 'AWS::CloudWatch::Alarm');
    if (!STAGES[stage].alarms.enabled) {
      expect(alarms).toEqual([]);
      expect(body).not.toContain('"type":"alarm"');
      return;
    }
    expect(body).toContain('"type":"alarm"');
    for (const [id] of alarms) expect(body, id).toContain(`{"Fn::GetAtt":["${id}","Arn"]}`);
  });
});
