import { STRIPE_SECRET_OUTPUT } from '@svc/api';
import { STRIPE_CONFIRM_RETRIES, STRIPE_CONFIRM_TIMEOUT_MS, STRIPE_RETRIES, STRIPE_TIMEOUT_MS } from '@svc/payments';
import { describe, expect, it } from 'vitest';
import { FIELDS as STAGE_SECRET_FIELDS } from '../../apps/ops/src/stripe';
import { adyenSecretFields } from '../../services/payments/src/providers/adyen/adyen-config';
import { RUNTIME_LIMITS_KEY } from '../../services/payments/src/providers/provider-rate-limits';
import { stripeSecretFields } from '../../services/payments/src/providers/stripe/stripe-config';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService, logicalIdStartingWith, rolesAllowedOn, routes } from './support/template-model';

useSynthesizedApp();

function roleOf(stage: (typeof STAGE_NAMES)[number], service: string): string {
  const fn = functionsByService(templateOf(stage)).get(service);
  if (!fn) throw new Error(`No function for ${service} in ${stage}`);
  return fn.roleId;
}

describe.each(STAGE_NAMES)('Stripe in the %s stage', (stage) => {
  it('keeps its keys in one secret that payments, the portal, the billing worker and the resolver read and no function writes', () => {
    const template = templateOf(stage);
    const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'StripeKeys');
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:GetSecretValue', 'secretsmanager:*'])).toEqual(
      new Set([
        roleOf(stage, 'payments'),
        roleOf(stage, 'portal'),
        roleOf(stage, 'billing-worker'),
        roleOf(stage, 'payment-resolver'),
      ]),
    );
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:PutSecretValue', 'secretsmanager:*']).size).toBe(0);
    for (const service of ['payments', 'portal', 'billing-worker', 'payment-resolver']) {
      const fn = functionsByService(template).get(service);
      expect(fn?.properties.Environment.Variables.SVC_STRIPE_SECRET_ARN, service).toEqual({ Ref: secretId });
    }
    expect(template.toJSON().Outputs[STRIPE_SECRET_OUTPUT]?.Value).toEqual({ Ref: secretId });
  });

  it('routes Stripe’s events and the donor’s return to the payments function, without an authorizer', () => {
    const keys = routes(templateOf(stage)).filter((route) => route.routeKey.includes('/providers/stripe/'));
    expect(keys.map((route) => route.routeKey).sort()).toEqual([
      'GET /providers/stripe/return/payment-sources/{payment_source_uuid}',
      'GET /providers/stripe/return/payments/{payment_uuid}',
      'POST /providers/stripe/events',
    ]);
    for (const route of keys) expect(route.authorizationType ?? 'NONE', route.routeKey).toBe('NONE');
  });

  it('routes Adyen’s notifications and the donor’s return to the payments function, without an authorizer', () => {
    const keys = routes(templateOf(stage)).filter((route) => route.routeKey.includes('/providers/adyen/'));
    expect(keys.map((route) => route.routeKey).sort()).toEqual([
      'GET /providers/adyen/return/payment-sources/{payment_source_uuid}',
      'GET /providers/adyen/return/payments/{payment_uuid}',
      'POST /providers/adyen/notifications',
      // The donor's return by POST: a redirect Adyen made by POST, or a result too long for a URL.
      'POST /providers/adyen/return/payment-sources/{payment_source_uuid}',
      'POST /providers/adyen/return/payments/{payment_uuid}',
    ]);
    for (const route of keys) expect(route.authorizationType ?? 'NONE', route.routeKey).toBe('NONE');
  });

  it('asks about payments with an unknown outcome every five minutes', () => {
    const template = templateOf(stage);
    const schedule = Object.values(template.findResources('AWS::Scheduler::Schedule')).find((s) =>
      String(s.Properties?.Description).includes('Asks payment providers again'),
    );
    expect(schedule?.Properties?.ScheduleExpression).toBe('rate(5 minutes)');
    const fn = functionsByService(template).get('payment-resolver');
    expect(fn?.properties.Environment.Variables.SVC_STRIPE_SECRET_ARN).toBeDefined();
  });

  it('alarms on refused Stripe deliveries where the stage has alarms', () => {
    const alarms = Object.values(templateOf(stage).findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      String(alarm.Properties?.AlarmDescription).includes('Stripe event deliveries were refused'),
    );
    expect(alarms).toHaveLength(STAGES[stage].alarms.enabled ? 1 : 0);
  });
});

describe.each(STAGE_NAMES)('Stripe’s time budget in the %s stage', (stage) => {
  it('gives the payments function 29 s (an HTTP API waits 30 s at most), more than the slowest Stripe path takes', () => {
    const fn = functionsByService(templateOf(stage)).get('payments');
    expect(fn?.properties.Timeout).toBe(29);
    // Customer (or a list) with the SDK's retry and its longest back-off, then the confirmation.
    const slowest =
      STRIPE_TIMEOUT_MS * (STRIPE_RETRIES + 1) + 2_000 + STRIPE_CONFIRM_TIMEOUT_MS * (STRIPE_CONFIRM_RETRIES + 1);
    expect(slowest).toBeLessThan(29_000);
  });

  it('alarms on a payment paid after we failed it, and on Stripe refusing our key, where the stage has alarms', () => {
    const descriptions = Object.values(templateOf(stage).findResources('AWS::CloudWatch::Alarm')).map((alarm) =>
      String(alarm.Properties?.AlarmDescription),
    );
    const anomalies = descriptions.filter((d) => /paid at the provider after all|refused the platform’s key/.test(d));
    expect(anomalies).toHaveLength(STAGES[stage].alarms.enabled ? 2 : 0);
  });

  it('alarms on money a provider reports elsewhere or unrecorded, and on an open circuit, where the stage has alarms', () => {
    const alarms = Object.values(templateOf(stage).findResources('AWS::CloudWatch::Alarm'));
    const on = (pattern: RegExp) => alarms.filter((alarm) => pattern.test(String(alarm.Properties?.AlarmDescription)));
    const expected = STAGES[stage].alarms.enabled ? 1 : 0;
    expect(on(/recorded at another provider/)).toHaveLength(expected);
    expect(on(/never recorded/)).toHaveLength(expected);
    expect(on(/cancelled a payment recorded as paid/)).toHaveLength(expected);
    const circuits = on(/circuit opened/);
    expect(circuits).toHaveLength(2 * expected);
    for (const alarm of circuits) {
      expect(alarm.Properties?.MetricName).toBe('ProviderCircuitChanges');
      expect(alarm.Properties?.Threshold).toBe(1);
      // Sent to the stage's alarm topic (and its other targets), as every alarm.
      expect(alarm.Properties?.AlarmActions).toContainEqual({ Ref: expect.stringMatching(/^AlarmTopic/) });
    }
  });
});

describe('the providers secret’s description', () => {
  it('names every field the code reads from it or writes into it', () => {
    // From the readers' own schemas and `pnpm ops stripe configure`'s fields, not a list kept here.
    const fields = new Set([
      ...stripeSecretFields(),
      ...adyenSecretFields(),
      ...Object.values(STAGE_SECRET_FIELDS),
      RUNTIME_LIMITS_KEY,
    ]);
    expect(fields.size).toBeGreaterThanOrEqual(9);
    for (const stage of STAGE_NAMES) {
      const template = templateOf(stage);
      const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'StripeKeys');
      const properties = template.toJSON().Resources[secretId]?.Properties;
      const description = String(properties?.Description);
      // And the placeholder the secret is created with.
      const placeholder = properties?.GenerateSecretString?.GenerateStringKey;
      for (const field of [...fields, placeholder]) expect(description, `${stage}: ${field}`).toContain(`"${field}"`);
    }
  });
});
