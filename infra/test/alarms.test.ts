import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { AlarmTopic } from '../constructs/alarm-topic';
import { synthesizeAllStages, templateOf } from './support/synth';

beforeAll(() => {
  synthesizeAllStages();
});

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
