import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '@adyen/api-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdyenCallError, adyenHttpClient } from './adyen-http';
import { detailsIdempotencyKey } from './adyen-provider';

/**
 * How an Adyen answer is classified for money: only an answer that proves nothing was done may be
 * `invalid` (a refusal) or `not_reached` (fail-over); anything that may still charge is `unknown`.
 */
let server: Server;
let base = '';
/** The answer the server gives next: status, body, headers. */
let next: { status: number; body: Record<string, unknown>; headers?: Record<string, string> };

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(next.status, { 'content-type': 'application/json', connection: 'close', ...next.headers });
    response.end(JSON.stringify(next.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v72`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function kindOf(answer: typeof next, url = 'https://checkout-test.adyen.com/v72/payments'): Promise<string> {
  next = answer;
  const client = adyenHttpClient({ base, timeoutMs: 2_000 });
  try {
    await client.request(url, '{}', { apiKey: 'key' } as Config, true, { idempotencyKey: 'k' });
    return 'answered';
  } catch (error) {
    return (error as AdyenCallError).kind;
  }
}

describe('Adyen answers, as far as they matter for money', () => {
  it('takes a request still in progress under its idempotency key (704, 422 or 409, transient-error) as unknown', async () => {
    const inProgress = { status: 422, errorCode: '704', message: 'request already processed or in progress' };
    expect(await kindOf({ status: 422, body: inProgress, headers: { 'transient-error': 'true' } })).toBe('unknown');
    expect(await kindOf({ status: 409, body: { ...inProgress, status: 409 } })).toBe('unknown');
    expect(
      await kindOf({ status: 422, body: { status: 422, errorCode: '000' }, headers: { 'transient-error': 'true' } }),
    ).toBe('unknown');
  });

  it('takes a validation error as invalid, 401/403 as refused, a rate limit (429, or 00_500 too many requests) and 5xx as unknown', async () => {
    expect(await kindOf({ status: 422, body: { status: 422, errorCode: '14_018', message: 'Invalid payload' } })).toBe(
      'invalid',
    );
    expect(await kindOf({ status: 403, body: { status: 403, errorCode: '901' } })).toBe('refused');
    // Adyen never says a rate-limited request was not processed (docs.adyen.com/errors/internal).
    expect(await kindOf({ status: 429, body: { status: 429 } })).toBe('unknown');
    expect(
      await kindOf({
        status: 500,
        body: { status: 500, errorCode: '00_500', errorType: 'internal', detail: 'too many requests' },
      }),
    ).toBe('unknown');
    expect(await kindOf({ status: 500, body: { status: 500, errorCode: '905' } })).toBe('unknown');
    expect(await kindOf({ status: 200, body: { resultCode: 'Authorised' } })).toBe('answered');
  });

  it('takes a refused connection as never sent', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = adyenHttpClient({ base: `http://127.0.0.1:${port}/v72`, timeoutMs: 2_000 });
    const failure = await client
      .request('https://checkout-test.adyen.com/v72/payments', '{}', { apiKey: 'key' } as Config, true, {})
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AdyenCallError);
    expect((failure as AdyenCallError).kind).toBe('not_reached');
  });
});

describe('the idempotency key of /payments/details', () => {
  it('is one per redirectResult, the same for a retry, and within Adyen’s 64 characters', () => {
    const payment = '1db5fce8-4930-491f-9d6d-69ad54574fd8';
    const key = detailsIdempotencyKey(payment, 'X'.repeat(5_000));
    expect(key.length).toBeLessThanOrEqual(64);
    expect(key.startsWith(`${payment}:details:`)).toBe(true);
    expect(detailsIdempotencyKey(payment, 'X'.repeat(5_000))).toBe(key);
    expect(detailsIdempotencyKey(payment, 'Y')).not.toBe(key);
  });
});
