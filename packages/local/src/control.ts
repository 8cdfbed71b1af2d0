import { advanceClock, freezeClock, resumeRealTime, ValidationError } from '@svc/core';
import { z } from 'zod';
import { settle } from './background';

/** The local runtime's control endpoints (contract 1.1). Never part of a deployed stage. */
export interface ControlResponse {
  status: number;
  body: unknown;
}

const clockBody = z.union([
  z.object({ now: z.number().int().nonnegative().nullable() }).strict(),
  z.object({ advance_seconds: z.number().int() }).strict(),
]);

export async function handleControl(method: string, path: string, body: unknown): Promise<ControlResponse | undefined> {
  if (method !== 'POST') return undefined;
  if (path === '/_local/clock') {
    const parsed = clockBody.safeParse(body);
    if (!parsed.success) {
      throw ValidationError.field(
        'body',
        'error.validation.not_valid',
        'Send {"now": <unix seconds>|null} or {"advance_seconds": <whole seconds>}',
      );
    }
    const value = parsed.data;
    const at =
      'advance_seconds' in value
        ? advanceClock(value.advance_seconds)
        : value.now === null
          ? resumeRealTime()
          : freezeClock(value.now);
    return { status: 200, body: { now: at } };
  }
  if (path === '/_local/settle') {
    return { status: 200, body: { processed: await settle() } };
  }
  return undefined;
}
