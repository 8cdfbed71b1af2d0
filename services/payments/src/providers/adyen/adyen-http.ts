import type { Config } from '@adyen/api-library';
import type ClientInterface from '@adyen/api-library/lib/src/httpClient/clientInterface';
import type { IRequest } from '@adyen/api-library/lib/src/typings/requestOptions';

/**
 * How an Adyen call failed, as far as it matters for money:
 *
 * - `not_reached`: the request provably never reached Adyen (the connection was refused, the
 *   name did not resolve, the TCP connection was never made). Nothing can have happened there,
 *   so the payment may be sent to another provider in the same request.
 * - `unknown`: Adyen may have acted (a timeout after the request was sent, a connection cut
 *   while the answer came, a 5xx). Never sent anywhere else: resolved at Adyen.
 * - A rate limit is `unknown` too. Adyen documents its rate limit as an internal error, errorCode
 *   00_500 with the detail "too many requests": "The request may succeed later, when the current
 *   time frame for the rate limit has ended" (https://docs.adyen.com/errors/internal). Nowhere does
 *   it say such a request was not processed, nor does it document a 429 for the Checkout API, so
 *   neither moves a payment to another provider (issue 45): it waits on Adyen as any unknown
 *   outcome, resolved by our reference. (`rate_limited` stays in the type for the callers' sake;
 *   Adyen's answers no longer produce it.)
 * - `refused`: 401/403, our API key or merchant account was refused before anything was done.
 * - `invalid`: 4xx (400, 404, 422): Adyen validated the request and did nothing.
 *   Except "request already processed or in progress" (errorCode 704, HTTP 422 or 409, header
 *   `transient-error: true`): an earlier request under the same idempotency key is still being
 *   processed, and may charge; Adyen says to retry later under the same key
 *   (https://docs.adyen.com/development-resources/api-idempotency/). It is
 *   `unknown`, never a refusal.
 */
export type AdyenFailureKind = 'not_reached' | 'unknown' | 'rate_limited' | 'refused' | 'invalid';

export class AdyenCallError extends Error {
  readonly kind: AdyenFailureKind;
  readonly status: number | undefined;
  readonly errorCode: string | undefined;
  readonly errorType: string | undefined;
  /** Seconds Adyen asked us to wait (a 429's `Retry-After`), if it said. */
  readonly retryAfter: number | undefined;
  constructor(
    kind: AdyenFailureKind,
    message: string,
    details: { status?: number; errorCode?: string; errorType?: string; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = 'AdyenCallError';
    this.kind = kind;
    this.status = details.status;
    this.errorCode = details.errorCode;
    this.errorType = details.errorType;
    this.retryAfter = details.retryAfter;
  }
}

/** Connection errors that prove the request was never sent (no TCP connection was made). */
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Adyen's Checkout endpoints as the library writes them, up to and including the API version. */
const CHECKOUT_BASE = /^https:\/\/[^/]+(?:\/checkout)?\/v\d+/;

/**
 * The HTTP client the Adyen library calls (its `ClientInterface`): the library builds every
 * request and reads every answer with its own types; this client only sends it. It exists because
 * the library's own client (a) always speaks HTTPS to Adyen's hosts, so it cannot be pointed at a
 * stand-in (`SVC_ADYEN_API_BASE`), and (b) reports a refused connection and a timeout alike,
 * where the first may fail over and the second must not. Timeouts are per call.
 */
export function adyenHttpClient(options: { base?: string | undefined; timeoutMs: number }): ClientInterface {
  return {
    async request(
      endpoint: string,
      json: string | Buffer,
      config: Config,
      _apiKeyRequired: boolean,
      requestOptions: IRequest.Options = {},
    ) {
      const url = options.base ? endpoint.replace(CHECKOUT_BASE, options.base.replace(/\/$/, '')) : endpoint;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}),
        ...(requestOptions.idempotencyKey ? { 'idempotency-key': requestOptions.idempotencyKey } : {}),
      };
      for (const [name, value] of Object.entries(requestOptions.headers ?? {})) {
        if (typeof value === 'string') headers[name.toLowerCase()] = value;
      }
      const query = requestOptions.params ? `?${new URLSearchParams(requestOptions.params).toString()}` : '';
      let response: Response;
      try {
        response = await fetch(url + query, {
          method: requestOptions.method ?? 'POST',
          headers,
          ...(requestOptions.method === 'GET' || requestOptions.method === 'DELETE' ? {} : { body: json.toString() }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        throw connectionFailure(error);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // The answer was cut while it came: Adyen had the request.
        throw new AdyenCallError('unknown', `Adyen's answer was cut: ${describe(error)}`, { cause: error });
      }
      if (response.ok) return text;
      throw answeredFailure(response, text);
    },
  };
}

function connectionFailure(error: unknown): AdyenCallError {
  const cause = (error as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  if (code && NEVER_SENT.has(code)) {
    return new AdyenCallError('not_reached', `Adyen was not reached (${code})`, { cause: error });
  }
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
  return new AdyenCallError(
    'unknown',
    timedOut ? 'Adyen did not answer in time' : `Adyen did not answer: ${describe(error)}`,
    {
      cause: error,
    },
  );
}

function answeredFailure(response: Response, text: string): AdyenCallError {
  let body: { status?: number; errorCode?: string; message?: string; errorType?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not Adyen's error shape (a proxy's page): the status alone decides.
  }
  const status = response.status;
  const details = {
    status,
    ...(body.errorCode ? { errorCode: body.errorCode } : {}),
    ...(body.errorType ? { errorType: body.errorType } : {}),
  };
  const message = body.message ?? `HTTP ${status}`;
  // A 429 (from whatever answers for Adyen) is not documented as "not processed": unknown, as above.
  if (status === 429) return new AdyenCallError('unknown', message, details);
  if (status === 401 || status === 403) return new AdyenCallError('refused', message, details);
  if (status >= 500) return new AdyenCallError('unknown', message, details);
  if (status === 409 || body.errorCode === '704' || response.headers.get('transient-error') === 'true')
    return new AdyenCallError('unknown', message, details);
  return new AdyenCallError('invalid', message, details);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
