import { describe, expect, it } from 'vitest';
import { advanceClock, freezeClock, isClockFrozen, now, resumeRealTime } from './clock';

describe('service clock', () => {
  it('freezes, advances and returns to real time', () => {
    expect(freezeClock(1_000)).toBe(1_000);
    expect(now()).toBe(1_000);
    expect(advanceClock(60)).toBe(1_060);
    expect(now()).toBe(1_060);
    const real = resumeRealTime();
    expect(isClockFrozen()).toBe(false);
    expect(Math.abs(real - Date.now() / 1000)).toBeLessThan(2);
  });

  it('freezes a running clock at now + n when advanced', () => {
    resumeRealTime();
    const before = now();
    const advanced = advanceClock(3600);
    expect(isClockFrozen()).toBe(true);
    expect(advanced - before).toBeGreaterThanOrEqual(3600);
    expect(advanced - before).toBeLessThanOrEqual(3601);
  });

  it('refuses times that are not whole non-negative seconds', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => freezeClock(bad)).toThrow(RangeError);
  });
});
