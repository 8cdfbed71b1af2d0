import {
  advanceClock,
  ForbiddenError,
  freezeClock,
  NotFoundError,
  now,
  resumeRealTime,
  UnsupportedMediaTypeError,
  ValidationError,
} from '@svc/core';
import { allProviderHealth, PROVIDER_FAULTS, PROVIDER_NAMES, providerFault, setProviderFault } from '@svc/payments';
import * as z from 'zod';
import { settle } from './background';
import { runBillingNow } from './billing';
import { localMail, setLocalMailFault } from './mail';
import './payments';
import './pipeline';
import './object-files';
import './mail';

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

const faultBody = z.object({ mode: z.enum(PROVIDER_FAULTS).nullable() }).strict();
/** The SES stand-in's next `count` SendEmail calls fail: 429 TooManyRequestsException or 500. */
const mailFaultBody = z
  .object({ mode: z.enum(['throttle', 'error']).nullable(), count: z.number().int().min(1).max(1000).optional() })
  .strict();
const FAULT_PATH = /^\/_local\/providers\/([a-z0-9_-]{1,40})\/fault$/;

/** Each provider's circuit (test and live) and the fault injected in front of it, if any. */
async function providersView() {
  const health = await allProviderHealth(PROVIDER_NAMES);
  return {
    providers: PROVIDER_NAMES.map((name) => ({
      name,
      fault: providerFault(name) ?? null,
      circuits: health
        .filter((h) => h.provider === name)
        .map((h) => ({
          mode: h.mode,
          state: h.state,
          failures: h.failures,
          ...(h.opened_at !== undefined ? { opened_at: h.opened_at } : {}),
          ...(h.last_failure ? { last_failure: h.last_failure } : {}),
        })),
    })),
  };
}

/** `127.0.0.1`, `localhost` or `[::1]`, with or without a port. */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/**
 * The controls move the clock and inject faults, so a web page the developer visits must not
 * reach them. A page of another site that resolves its own name to 127.0.0.1 (DNS rebinding)
 * sends its own name as `Host`: only a loopback host is answered (403 otherwise). A cross-site
 * form can POST without a CORS preflight only as a "simple" content type (form, multipart,
 * text/plain; Fetch standard, CORS-safelisted request header, https://fetch.spec.whatwg.org/#cors-safelisted-request-header):
 * a POST must say `application/json` (415 otherwise), which a browser sends cross-site only
 * after a preflight this server never grants.
 */
export function assertLocalCaller(method: string, headers: Record<string, string | string[] | undefined>): void {
  const host = headerValue(headers, 'host')?.trim() ?? '';
  if (!LOOPBACK_HOST.test(host)) {
    throw new ForbiddenError(
      'The local controls answer only requests to a loopback host (127.0.0.1, localhost, [::1])',
    );
  }
  if (method.toUpperCase() !== 'POST') return;
  const type = headerValue(headers, 'content-type') ?? '';
  const mediaType = type.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') throw new UnsupportedMediaTypeError(type);
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
}

export async function handleControl(
  method: string,
  path: string,
  body: unknown,
  query: URLSearchParams = new URLSearchParams(),
): Promise<ControlResponse | undefined> {
  if (method === 'GET' && path === '/_local/providers') return { status: 200, body: await providersView() };
  // Contract section 14: what the SES stand-in accepted, newest first (for one recipient with `to`).
  if (method === 'GET' && path === '/_local/mail') {
    return { status: 200, body: await localMail(query.get('to') ?? undefined) };
  }
  if (method !== 'POST') return undefined;
  if (path === '/_local/mail/fault') {
    const parsed = mailFaultBody.safeParse(body);
    if (!parsed.success) {
      throw ValidationError.field(
        'mode',
        'error.validation.not_valid',
        'Send {"mode": "throttle" | "error" | null, "count"?: n}',
      );
    }
    const { mode, count = 1 } = parsed.data;
    await setLocalMailFault(mode ? { mode, remaining: count } : undefined);
    return { status: 200, body: { mode, count: mode ? count : 0 } };
  }
  const fault = FAULT_PATH.exec(path);
  if (fault?.[1]) {
    const name = fault[1];
    if (!PROVIDER_NAMES.includes(name)) throw new NotFoundError(`No payment provider ${name}`);
    const parsed = faultBody.safeParse(body);
    if (!parsed.success) {
      throw ValidationError.field(
        'mode',
        'error.validation.not_valid',
        `Send {"mode": ${PROVIDER_FAULTS.map((m) => `"${m}"`).join(' | ')} | null}`,
      );
    }
    setProviderFault(name, parsed.data.mode);
    return { status: 200, body: { name, fault: parsed.data.mode } };
  }
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
