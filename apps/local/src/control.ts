import { advanceClock, freezeClock, now, resumeRealTime, ValidationError } from '@svc/core';
import * as z from 'zod';
import { settle } from './background';
import { runBillingNow } from './billing';
import './payments';
import './pipeline';
import './object-files';

/** The local runtime's control endpoints. Never part of a deployed stage. */
export interface ControlResponse {
  status: number;
  body: unknown;
}

/** Up to the year 9999, far beyond anything a test needs, and safe for Date. */
const MAX_UNIX_SECONDS = 253_402_300_799;

const clockBody = z.union([
  z.object({ now: z.number().int().min(0).max(MAX_UNIX_SECONDS).nullable() }).strict(),
  z.object({ advance_seconds: z.number().int().min(0).max(MAX_UNIX_SECONDS) }).strict(),
]);

export async function handleControl(method: string, path: string, body: unknown): Promise<ControlResponse | undefined> {
  if (method !== 'POST') return undefined;
  if (path === '/_local/clock') {
    const parsed = clockBody.safeParse(body);
    if (!parsed.success) {
      throw ValidationError.field(
        'body',
        'error.validation.not_valid',
        'Send {"now": <unix seconds>|null} or {"advance_seconds": <whole seconds, not negative>}',
      );
    }
    const value = parsed.data;
    if ('advance_seconds' in value && now() + value.advance_seconds > MAX_UNIX_SECONDS) {
      throw ValidationError.field('advance_seconds', 'error.validation.too_big', 'That would move the clock past 9999');
    }
    const at =
      'advance_seconds' in value
        ? advanceClock(value.advance_seconds)
        : value.now === null
          ? resumeRealTime()
          : freezeClock(value.now);
    return { status: 200, body: { now: at } };
  }
  if (path === '/_local/billing-run') {
    return { status: 200, body: await runBillingNow() };
  }
  if (path === '/_local/settle') {
    return { status: 200, body: { processed: await settle() } };
  }
  return undefined;
}
