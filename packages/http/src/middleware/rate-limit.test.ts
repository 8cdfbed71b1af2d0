import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRateLimit, RateLimiter, type SharedWindows } from './rate-limit';

/** The shared per-second items as the table keeps them, and the calls they took. */
function sharedWindows() {
  const items = new Map<string, { admitted: number; instances: number }>();
  const calls = { writes: 0, reads: 0 };
  const windows: SharedWindows = {
    add: async (caller, second, admitted) => {
      calls.writes += 1;
      const item = items.get(`${caller}@${second}`) ?? { admitted: 0, instances: 0 };
      items.set(`${caller}@${second}`, { admitted: item.admitted + admitted, instances: item.instances + 1 });
    },
    total: async (caller, second) => {
      calls.reads += 1;
      return items.get(`${caller}@${second}`) ?? { admitted: 0, instances: 0 };
    },
  };
  return { windows, calls };
}

async function outcome(limiter: RateLimiter, caller: string): Promise<'ok' | number> {
  try {
    await limiter.admit(caller);
    return 'ok';
  } catch (error) {
    const refused = error as { statusCode: number; retryAfterSeconds: number };
    expect(refused.statusCode).toBe(429);
    return refused.retryAfterSeconds;
  }
}

/** Runs `seconds` of traffic: each instance offers `perInstance[i]` requests a second, spread over it. */
async function traffic(
  instances: RateLimiter[],
  perInstance: (second: number, instance: number) => number,
  seconds: number,
  clock: { now: number },
) {
  const admitted: number[] = [];
  for (let second = 0; second < seconds; second += 1) {
    let inSecond = 0;
    const offers = instances.map((_, index) => perInstance(second, index));
    const steps = Math.max(1, ...offers);
    for (let step = 0; step < steps; step += 1) {
      clock.now = 1_000 + second + step / (steps + 1);
      for (const [index, instance] of instances.entries()) {
        if (step < (offers[index] ?? 0) && (await outcome(instance, 'client:x')) === 'ok') inSecond += 1;
      }
    }
    admitted.push(inSecond);
  }
  return admitted;
}

describe('the rate limit configuration', () => {
  it('reads perSecond/burst and refuses anything else (the limit is then off)', () => {
    expect(parseRateLimit('100/200')).toEqual({ perSecond: 100, burst: 200 });
    expect(parseRateLimit(' 2.5 / 5 ')).toEqual({ perSecond: 2.5, burst: 5 });
    for (const bad of [undefined, '', '100', '0/5', '5/0', '-1/5', 'a/b', '5/2.5']) {
      expect(parseRateLimit(bad)).toBe(undefined);
    }
  });
});

describe('one instance', () => {
  it('admits a burst within a second, refuses the next with the seconds to wait, and admits again the next second', async () => {
    const clock = { now: 1000.25 };
    const limiter = new RateLimiter({ perSecond: 100, burst: 3 }, sharedWindows().windows, () => clock.now);
    const first = [];
    for (let i = 0; i < 4; i += 1) first.push(await outcome(limiter, 'client:a'));
    expect(first).toEqual(['ok', 'ok', 'ok', 1]);
    // Another client has a count of its own.
    expect(await outcome(limiter, 'client:b')).toBe('ok');
    clock.now = 1001.1;
    expect(await outcome(limiter, 'client:a')).toBe('ok');
  });

  it('writes and reads at most once per caller per second, whatever the number of requests', async () => {
    const clock = { now: 0 };
    const { windows, calls } = sharedWindows();
    const limiter = new RateLimiter({ perSecond: 10_000, burst: 10_000 }, windows, () => clock.now);
    const admitted = await traffic([limiter], () => 1000, 5, clock);
    expect(admitted).toEqual([1000, 1000, 1000, 1000, 1000]);
    // 5,000 requests: a read at the start of each second, a write of the second before from the second on.
    expect(calls).toEqual({ reads: 5, writes: 4 });
  });

  it('never fails a request when the table does not answer: it limits by the burst alone', async () => {
    const clock = { now: 0 };
    const broken: SharedWindows = {
      add: async () => {
        throw new Error('table down');
      },
      total: async () => {
        throw new Error('table down');
      },
    };
    const limiter = new RateLimiter({ perSecond: 1, burst: 2 }, broken, () => clock.now);
    expect(await traffic([limiter], () => 5, 3, clock)).toEqual([2, 2, 2]);
  });
});

describe('several instances sharing the per-second totals', () => {
  it('hold a client sending four times its limit near the limit from the third second on', async () => {
    const clock = { now: 0 };
    const { windows } = sharedWindows();
    const instances = [0, 1, 2, 3].map(() => new RateLimiter({ perSecond: 20, burst: 30 }, windows, () => clock.now));
    const admitted = await traffic(instances, () => 20, 10, clock);
    // Two seconds unknown (each instance within its burst), then the shares add up to the limit.
    expect(admitted.slice(0, 2)).toEqual([80, 80]);
    for (const second of admitted.slice(2)) expect(second).toBeLessThanOrEqual(20);
    for (const second of admitted.slice(3)) expect(second).toBeGreaterThanOrEqual(16);
  });

  it('give a new instance a share when the others hold the whole limit', async () => {
    const clock = { now: 0 };
    const { windows } = sharedWindows();
    const instances = [0, 1, 2, 3].map(() => new RateLimiter({ perSecond: 20, burst: 30 }, windows, () => clock.now));
    // The fourth instance starts sending in second 6.
    const admitted = await traffic(instances, (second, index) => (index < 3 || second >= 6 ? 20 : 0), 12, clock);
    // For two seconds the newcomer adds an even share (20 / 3, rounded up) above the others'.
    for (const second of admitted.slice(2)) expect(second).toBeLessThanOrEqual(20 + 4 + 7);
    // Then all four share the limit.
    for (const second of admitted.slice(9)) expect(second).toBeGreaterThanOrEqual(15);
    for (const second of admitted.slice(9)) expect(second).toBeLessThanOrEqual(20 + 4);
  });

  it('admit everything a client sends within its limit, however it is spread over instances, and hold one over it near the limit (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 5, max: 50 }),
        fc.double({ min: 0.1, max: 6, noNaN: true }),
        async (instanceCount, limit, load) => {
          const clock = { now: 0 };
          const { windows } = sharedWindows();
          const instances = Array.from(
            { length: instanceCount },
            () => new RateLimiter({ perSecond: limit, burst: limit }, windows, () => clock.now),
          );
          // The client offers `load` times its limit, evenly over the instances.
          const perInstance = Math.max(1, Math.floor((load * limit) / instanceCount));
          const offered = perInstance * instanceCount;
          const admitted = await traffic(instances, () => perInstance, 12, clock);
          if (offered <= limit) {
            expect(admitted.every((second) => second === offered)).toBe(true);
          } else {
            const steady = admitted.slice(3);
            const mean = steady.reduce((a, b) => a + b, 0) / steady.length;
            expect(mean).toBeLessThanOrEqual(limit + instanceCount);
            expect(mean).toBeGreaterThanOrEqual(Math.min(offered, limit) * 0.5);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
