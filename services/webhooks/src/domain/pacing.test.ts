import type { PostResult } from '@svc/outbound';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PAUSE_SECONDS,
  MAX_PAUSE_SECONDS,
  MAX_THROTTLE_FLOOR_SECONDS,
  MAX_THROTTLED_ATTEMPTS,
  nextThrottledAttempt,
  pauseAskedBy,
  rateOf,
  throttleFloorSeconds,
} from './pacing';

const answer = (statusCode: number, headers: Record<string, string> = {}): PostResult =>
  ({ ok: statusCode < 300, statusCode, responseHeaders: headers, responseBody: '' }) as unknown as PostResult;
const AT = 1_800_000_000;

describe('what an endpoint’s answer asks of its pace', () => {
  it('a 429 pauses for its Retry-After seconds, or 5 s without one; a 503 only with Retry-After', () => {
    expect(pauseAskedBy(answer(429, { 'retry-after': '30' }), AT)).toBe(AT + 30);
    expect(pauseAskedBy(answer(429), AT)).toBe(AT + DEFAULT_PAUSE_SECONDS);
    expect(pauseAskedBy(answer(503, { 'retry-after': '7' }), AT)).toBe(AT + 7);
    expect(pauseAskedBy(answer(503), AT)).toBeUndefined();
    expect(pauseAskedBy(answer(500, { 'retry-after': '7' }), AT)).toBeUndefined();
    expect(pauseAskedBy(answer(200, { 'retry-after': '7' }), AT)).toBeUndefined();
    expect(pauseAskedBy(undefined, AT)).toBeUndefined();
  });

  it('reads an HTTP date, and falls back to the default on a header it cannot read', () => {
    const inTwenty = new Date(Date.now() + 20_000).toUTCString();
    const paused = pauseAskedBy(answer(429, { 'retry-after': inTwenty }), AT) ?? 0;
    expect(paused - AT).toBeGreaterThanOrEqual(19);
    expect(paused - AT).toBeLessThanOrEqual(21);
    expect(pauseAskedBy(answer(429, { 'retry-after': 'soon' }), AT)).toBe(AT + DEFAULT_PAUSE_SECONDS);
  });

  it('keeps any asked pause between 1 s and an hour', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.string()), fc.constantFrom(429, 503), (value, status) => {
        const paused = pauseAskedBy(answer(status, { 'retry-after': String(value) }), AT) ?? AT + 1;
        expect(paused - AT).toBeGreaterThanOrEqual(1);
        expect(paused - AT).toBeLessThanOrEqual(MAX_PAUSE_SECONDS);
      }),
    );
  });

  it('paces an endpoint at its own rate, or 50 a second', () => {
    expect(rateOf({ max_deliveries_per_second: 7 })).toBe(7);
    expect(rateOf({})).toBe(50);
    expect(rateOf(undefined)).toBe(50);
  });
});

describe('the growing floor between throttled attempts', () => {
  it('doubles from 1 s to an hour, and never goes below what Retry-After asks', () => {
    expect([0, 1, 2, 3, 11, 12, 40].map(throttleFloorSeconds)).toEqual([1, 2, 4, 8, 2048, 3600, 3600]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: MAX_PAUSE_SECONDS }), (n, ask) => {
        const next = nextThrottledAttempt(AT + ask, AT, n);
        expect(next).toBeGreaterThanOrEqual(AT + ask);
        expect(next).toBeGreaterThanOrEqual(AT + throttleFloorSeconds(n));
        expect(next - AT).toBeLessThanOrEqual(Math.max(ask, MAX_THROTTLE_FLOOR_SECONDS));
        expect(throttleFloorSeconds(n + 1)).toBeGreaterThanOrEqual(throttleFloorSeconds(n));
      }),
    );
  });

  it('a receiver answering 429 with Retry-After: 1 as soon as it may is tried MAX_THROTTLED_ATTEMPTS times in 3 days', () => {
    let at = AT;
    let attempts = 0;
    // Tried each time it falls due; the MAX_THROTTLED_ATTEMPTS-th throttled answer ends it.
    while (at - AT < 3 * 86_400 && attempts < MAX_THROTTLED_ATTEMPTS) {
      attempts += 1;
      const asked = pauseAskedBy(answer(429, { 'retry-after': '1' }), at) ?? at;
      at = nextThrottledAttempt(asked, at, attempts - 1);
    }
    expect(attempts).toBe(50);
    // Honouring Retry-After alone would have been 259,200 attempts at one a second.
    expect(at - AT).toBeLessThan(3 * 86_400);
  });
});
