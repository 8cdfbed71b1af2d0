import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { fingerprintKeySource } from './providers/card-rules';
import { simulatedLiveRefusal } from './providers/simulated/simulated-provider';

/**
 * The simulated provider moves no money: on a stage whose config says `test-mode-only` (prod) it
 * takes test payments only, and a deployed function that was not told fails closed.
 */
let token: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
});

afterEach(() => {
  delete process.env.SVC_SIMULATED_PROVIDER;
});

const pay = (testMode: boolean) =>
  call('POST', '/payments', {
    token,
    body: cardPaymentBody({ amount: { value: '500', currency: 'CHF' }, test_mode: testMode }),
  });

describe('the simulated provider on a stage', () => {
  it('refuses a live payment where the stage allows test mode only, and takes a test one', async () => {
    process.env.SVC_SIMULATED_PROVIDER = 'test-mode-only';
    const live = await pay(false);
    expect(live.status).toBe(400);
    expect(live.json.error.message).toEqual([
      expect.objectContaining({ property: 'profile', message: expect.stringContaining('test_mode payments only') }),
    ]);
    const test = await pay(true);
    expect(test.status, test.text).toBe(201);
    expect(test.json).toMatchObject({ test_mode: true, status: 'succeeded' });
  });

  it('takes live payments where the stage allows all (dev, staging, the local runtime)', async () => {
    process.env.SVC_SIMULATED_PROVIDER = 'all';
    expect((await pay(false)).status).toBe(201);
    delete process.env.SVC_SIMULATED_PROVIDER;
    expect((await pay(false)).status).toBe(201);
  });

  it('fails closed in a deployed function that was given no setting', () => {
    expect(simulatedLiveRefusal(false, { AWS_LAMBDA_FUNCTION_NAME: 'svc-payments' })).toMatch(/test_mode/);
    expect(simulatedLiveRefusal(true, { AWS_LAMBDA_FUNCTION_NAME: 'svc-payments' })).toBeUndefined();
    expect(
      simulatedLiveRefusal(false, { AWS_LAMBDA_FUNCTION_NAME: 'x', SVC_SIMULATED_PROVIDER: 'all' }),
    ).toBeUndefined();
    expect(simulatedLiveRefusal(false, {})).toBeUndefined();
  });
});

describe('the card fingerprint key', () => {
  it('comes from the secret in a deployed function, and is never the local key there', () => {
    expect(
      fingerprintKeySource({ AWS_LAMBDA_FUNCTION_NAME: 'svc-payments', SVC_CARD_FINGERPRINT_SECRET_ARN: 'arn:s' }),
    ).toEqual({
      secretArn: 'arn:s',
    });
    expect(() => fingerprintKeySource({ AWS_LAMBDA_FUNCTION_NAME: 'svc-payments' })).toThrow(
      /never uses the local key/,
    );
    expect(fingerprintKeySource({})).toEqual({ localKey: 'simulated-provider-local-key' });
  });

  it('fails the payments function’s cold start when its secret is not configured', async () => {
    const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'svc-payments';
    try {
      // A fresh copy of the entry module (the query makes it one), loaded as a cold start would.
      const entry = './handlers/lambda?cold-start';
      await expect(import(/* @vite-ignore */ entry)).rejects.toThrow(/SVC_CARD_FINGERPRINT_SECRET_ARN/);
    } finally {
      if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
    }
  });
});
