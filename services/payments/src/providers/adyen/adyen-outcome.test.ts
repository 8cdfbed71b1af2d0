import { logger } from '@svc/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hmacList } from './adyen-config';
import { adyenOutcome, UNKNOWN_RESULT } from './adyen-provider';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Adyen result codes (issue 45, point 9)', () => {
  it('fails a payment only on the codes Adyen documents as final failures', () => {
    expect(adyenOutcome({ resultCode: 'Refused' as never, refusalReason: 'Not enough balance' })).toEqual({
      status: 'failed',
      reason: 'insufficient_funds',
    });
    expect(adyenOutcome({ resultCode: 'Error' as never })).toEqual({ status: 'failed', reason: 'declined' });
    expect(adyenOutcome({ resultCode: 'Cancelled' as never })).toEqual({ status: 'failed', reason: 'cancelled' });
    expect(adyenOutcome({ resultCode: 'Authorised' as never })).toEqual({ status: 'succeeded' });
  });

  it.each(['PartiallyAuthorised', 'AuthenticationFinished', 'AuthenticationNotRequired', 'SomethingNew', undefined])(
    'takes %s as an unknown outcome, alarmed, never a decline',
    (code) => {
      const errors = vi.spyOn(logger, 'error');
      expect(adyenOutcome({ resultCode: code as never })).toEqual({
        status: 'pending',
        reason: 'provider_unavailable',
      });
      expect(errors).toHaveBeenCalledWith(UNKNOWN_RESULT, { result_code: code ?? null });
    },
  );
});

describe('Adyen HMAC keys (issue 45, point 10)', () => {
  const key = 'ab'.repeat(32);
  it('takes even-length hex keys of at least 16 bytes, several while one is rolled', () => {
    expect(hmacList(` ${key} , ${key.toUpperCase()}`)).toEqual([key, key.toUpperCase()]);
    expect(hmacList(undefined)).toEqual([]);
  });

  it.each([
    ['not hex', 'zz'.repeat(32)],
    ['of odd length', `${key}a`],
    ['too short', 'abcd'],
    ['base64', Buffer.from(key, 'hex').toString('base64')],
  ])('refuses a key %s (Node would parse it to a short or empty key)', (_why, bad) => {
    expect(() => hmacList(bad)).toThrow(/hexadecimal/);
    expect(() => hmacList(`${key},${bad}`)).toThrow(/key 2/);
  });
});
