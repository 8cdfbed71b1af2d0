import { BUSINESS_METRICS } from '@svc/core';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import {
  REFUSAL_REASONS,
  REFUSALS_EXPRESSION,
  WEBHOOK_BACKLOG_AGE_ALARM,
  WEBHOOK_LAG_ALARM,
} from '../constructs/operations-alarms';
import { templateOf, useSynthesizedApp } from './support/synth';

useSynthesizedApp();

type Resource = { Type: string; Properties?: Record<string, unknown> };
type Query = { Id: string; Expression?: string; MetricStat?: { Metric: Record<string, unknown>; Period: number } };

/**
 * Issue 46, points 3 and 4: refused provider callbacks (Stripe's and Adyen's alike) and webhook
 * deliveries waiting in the table are alarmed, in every stage with alarms. Their metric math is
 * evaluated in metric-math.test.ts.
 */
describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('in the %s stage', (stage) => {
  const alarms = () =>
    Object.values(templateOf(stage).toJSON().Resources as Record<string, Resource>)
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((alarm) => alarm.Properties ?? {});
  const described = (start: string) => alarms().filter((alarm) => String(alarm.AlarmDescription).startsWith(start));

  it('alarm on refused callbacks of each provider alike, every reason summed', () => {
    for (const [provider, start] of [
      ['stripe', 'Stripe event deliveries were refused'],
      ['adyen', 'Adyen notifications were refused'],
    ] as const) {
      const found = described(start);
      expect(found, provider).toHaveLength(1);
      const alarm = found[0] as { Metrics: Query[]; Threshold: number; TreatMissingData: string };
      expect(alarm.Threshold).toBe(STAGES[stage].alarms.functionErrors);
      expect(alarm.TreatMissingData).toBe('notBreaching');
      expect(alarm.Metrics.find((m) => m.Expression)?.Expression).toBe(REFUSALS_EXPRESSION);
      const inputs = alarm.Metrics.filter((m) => m.MetricStat);
      expect(inputs.map((m) => m.Id).sort()).toEqual(Object.keys(REFUSAL_REASONS).sort());
      for (const input of inputs)
        expect(input.MetricStat?.Metric).toEqual({
          Namespace: `svc/${stage}`,
          MetricName: BUSINESS_METRICS.providerCallbacksRefused,
          Dimensions: expect.arrayContaining([
            { Name: 'service', Value: 'svc' },
            { Name: 'provider', Value: provider },
            { Name: 'reason', Value: REFUSAL_REASONS[input.Id as keyof typeof REFUSAL_REASONS] },
          ]),
        });
    }
    // The log filter that counted Stripe's alone is gone: one design for both.
    expect(JSON.stringify(templateOf(stage).toJSON())).not.toContain('StripeSignatureFailures');
  });

  it('alarm on the webhook backlog’s age (missing data: the sweeper stopped) and on the delivery lag', () => {
    expect(described('Webhook deliveries wait in the table')).toEqual([
      expect.objectContaining({
        Namespace: `svc/${stage}`,
        MetricName: BUSINESS_METRICS.webhookBacklogAge,
        Statistic: 'Maximum',
        Threshold: WEBHOOK_BACKLOG_AGE_ALARM.toSeconds(),
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'breaching',
      }),
    ]);
    expect(described('Webhook events reach their endpoints late')).toEqual([
      expect.objectContaining({
        Namespace: `svc/${stage}`,
        MetricName: BUSINESS_METRICS.eventToDeliveryLag,
        Statistic: 'Maximum',
        Threshold: WEBHOOK_LAG_ALARM.toSeconds(),
        TreatMissingData: 'notBreaching',
      }),
    ]);
  });
});
