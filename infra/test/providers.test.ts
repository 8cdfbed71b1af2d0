import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService } from './support/template-model';

useSynthesizedApp();

/** Every function that may take or charge a payment (and so reach a provider). */
const CHARGING = ['payments', 'subscriptions', 'billing-worker', 'payment-resolver'];

describe.each(STAGE_NAMES)('payment providers in the %s stage', (stage) => {
  it('tell every charging function what the simulated provider may take; prod takes test payments only', () => {
    const functions = functionsByService(templateOf(stage));
    for (const name of CHARGING) {
      const variables = functions.get(name)?.properties.Environment.Variables;
      expect(variables?.SVC_SIMULATED_PROVIDER, name).toBe(STAGES[stage].simulatedProvider);
    }
  });
});

it('keeps the simulated provider to test payments in prod', () => {
  expect(STAGES.prod.simulatedProvider).toBe('test-mode-only');
});
