import { providerRateLimitsSchema } from '@svc/payments/provider-rate-limits';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService } from './support/template-model';

useSynthesizedApp();

/**
 * The functions that take provider calls with the stage's keys (the provider secret): each gets
 * the stage's provider rate limits from the deploy (issue 46, point 2), so the version the `live`
 * alias points at has them, and can read the run-time override from that secret.
 */
const PROVIDER_CALLERS = ['payments', 'billing-worker', 'payment-resolver'];

describe.each(STAGE_NAMES)('provider rate limits in the %s stage', (stage) => {
  it('are the stage config’s, in SVC_PROVIDER_RATE_LIMITS of every function that takes provider calls, beside the secret that holds the override', () => {
    const functions = functionsByService(templateOf(stage));
    for (const name of PROVIDER_CALLERS) {
      const variables = functions.get(name)?.properties.Environment.Variables;
      expect(variables?.SVC_PROVIDER_RATE_LIMITS, name).toBe(JSON.stringify(STAGES[stage].providerRateLimits));
      expect(variables?.SVC_STRIPE_SECRET_ARN, name).toBeDefined();
    }
  });

  it('are in the shape the limiter reads', () => {
    expect(providerRateLimitsSchema.parse(STAGES[stage].providerRateLimits)).toEqual(STAGES[stage].providerRateLimits);
  });
});
