import { logger } from '@svc/core';
import type { PostResult } from '@svc/outbound';
import { clearTimeouts, noteTimeout } from '../repository/pace-repository';
import { pauseFor } from './pacing';

/**
 * Endpoints that keep timing out (issue 44: no tenant slows another's webhooks). Each attempt that
 * timed out (the 3 s connect timeout or the 10 s total bound, packages/outbound) adds one to the
 * endpoint's count on its pause item (an atomic ADD); any answer clears it. At
 * SLOW_AFTER_TIMEOUTS in a row the endpoint is "slow": paused for SLOW_PAUSE_SECONDS, so its
 * deliveries wait in the due index (pacing's pause, domain/pacing.ts) instead of holding shared
 * batches for their whole timeout. When the pause is over its count still stands, so a single
 * further timeout pauses it again: a dead endpoint costs one timed-out attempt per pause, not one
 * per delivery. Its deliveries are deferred, never failed for it: they keep their order and
 * their attempts (a deferral is not an attempt).
 */
export const SLOW_AFTER_TIMEOUTS = 3;
export const SLOW_PAUSE_SECONDS = 60;

/** Endpoints this container saw time out (so an answer clears their count without a write for every healthy one). */
const suspects = new Set<string>();

/** For tests: what this container remembers of timeouts is forgotten. */
export function forgetSlowEndpoints(): void {
  suspects.clear();
}

/** Notes an attempt's result for its endpoint; never throws (pacing is best effort beside the attempt). */
export async function noteAttempt(endpointUuid: string, result: PostResult | undefined, at: number): Promise<void> {
  try {
    if (result?.timedOut === true) {
      suspects.add(endpointUuid);
      const timeouts = await noteTimeout(endpointUuid, at);
      if (timeouts >= SLOW_AFTER_TIMEOUTS) {
        logger.warn('A webhook endpoint keeps timing out: paused', { endpoint: endpointUuid, timeouts });
        await pauseFor(endpointUuid, at + SLOW_PAUSE_SECONDS);
      }
    } else if (result !== undefined && result.blocked !== true && suspects.has(endpointUuid)) {
      suspects.delete(endpointUuid);
      await clearTimeouts(endpointUuid);
    }
  } catch (error) {
    logger.warn('An endpoint’s timeouts were not counted', { endpoint: endpointUuid, error });
  }
}
