/**
 * The one service clock. Every rule that depends on time reads `now()`; only operational throttles
 * and measurements use wall time. Deployed stages run on real time; the local runtime and tests may freeze and move
 * it (`/_local/clock`).
 */
let frozenAt: number | undefined;

/** Current service time in Unix seconds. */
export function now(): number {
  return frozenAt ?? Math.floor(Date.now() / 1000);
}

/** Current service time as a Date (for libraries that want one). */
export function nowDate(): Date {
  return new Date(now() * 1000);
}

export function freezeClock(unixSeconds: number): number {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError('The clock takes a non-negative whole number of Unix seconds');
  }
  frozenAt = unixSeconds;
  return frozenAt;
}

/** Moves the clock forward; on a running clock this freezes it at now + seconds. */
export function advanceClock(seconds: number): number {
  return freezeClock(now() + seconds);
}

export function resumeRealTime(): number {
  frozenAt = undefined;
  return now();
}

export function isClockFrozen(): boolean {
  return frozenAt !== undefined;
}
