import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { FLAGS } from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { alarmsNotifyContext, STAGE_NAMES } from '../config/stages';
import { REPO_ROOT } from '../constructs/repo-paths';
import { createServiceApp } from '../stacks/service-app';
import { appProps, SKIP_BUNDLING } from './support/app-props';

describe('the CDK app', () => {
  it('builds every stage when no stage is given', () => {
    const { stacks } = createServiceApp(appProps(SKIP_BUNDLING));
    expect(stacks.map((stack) => stack.stackName)).toEqual(STAGE_NAMES.map((name) => `svc-fundraising-${name}`));
  });

  it('builds only the stage named with -c stage=<name>', () => {
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'staging' }));
    expect(stacks.map((stack) => stack.config.name)).toEqual(['staging']);
  });

  it('refuses a stage it has no config for', () => {
    expect(() => createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'qa' }))).toThrow(/Unknown stage "qa"/);
  });

  it('synthesizes environment-agnostic stacks that need no lookups, account or credentials', () => {
    const { app, stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'prod' }));
    const assembly = app.synth();
    const [stack] = stacks;
    expect(stack?.environment).toBe('aws://unknown-account/unknown-region');
    expect(assembly.manifest.missing ?? []).toEqual([]);
  });
});

describe('cdk.json', () => {
  it('sets every feature flag aws-cdk-lib recommends a value for (`cdk flags` reports none unconfigured)', () => {
    const context = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
    ).context;
    const unconfigured = Object.entries(FLAGS)
      .filter(([, flag]) => flag.introducedIn.v2 !== undefined && flag.recommendedValue !== undefined)
      .map(([name]) => name)
      .filter((name) => !(name in context));
    expect(unconfigured).toEqual([]);
  });
});

describe('whom a stage’s alarms notify', () => {
  /** The test's app props without the recipients the suite gives, and with `extra`. */
  const withoutRecipients = (stage: string, extra: Record<string, unknown> = {}) => {
    const props = appProps({ ...SKIP_BUNDLING, stage });
    const context = props.context as Record<string, unknown>;
    delete context[alarmsNotifyContext(stage as 'prod')];
    Object.assign(context, extra);
    return props;
  };

  it('refuses to synthesize a stage whose alarms would notify nobody, naming the context key', () => {
    expect(() => createServiceApp(withoutRecipients('prod'))).toThrow(/notify nobody.*alarmsNotify\.prod/);
    expect(() => createServiceApp(withoutRecipients('staging'))).toThrow(/alarmsNotify\.staging/);
    // Dev has no alarms: nothing to notify.
    expect(() => createServiceApp(withoutRecipients('dev'))).not.toThrow();
  });

  it('subscribes the given e-mail addresses and sends the alarms to the given topics', () => {
    const { stacks } = createServiceApp(
      withoutRecipients('prod', {
        [alarmsNotifyContext('prod')]: 'ops@example.org, arn:aws:sns:eu-central-2:123456789012:pager',
      }),
    );
    const template = Template.fromStack(stacks[0] as never);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.org' });
    const actions = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) =>
      JSON.stringify(alarm.Properties?.AlarmActions),
    );
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.every((a) => a.includes('arn:aws:sns:eu-central-2:123456789012:pager'))).toBe(true);
    expect(() =>
      createServiceApp(withoutRecipients('prod', { [alarmsNotifyContext('prod')]: 'not an address' })),
    ).toThrow(/neither an e-mail address nor an SNS topic ARN/);
  });
});
