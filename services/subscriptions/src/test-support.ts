import { definedFields, freezeClock, now } from '@svc/core';
import { DateTime } from 'luxon';
import { expect } from 'vitest';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';

/**
 * Shared steps of the subscriptions tests: tokens that follow the moved service clock, saved
 * sources, supporters and subscriptions made through the API, and billing runs.
 */
let cached: { token: string; at: number } | undefined;

/** A token valid at the service clock's now (tokens live an hour; tests move the clock by months). */
export async function token(): Promise<string> {
  if (!cached || now() - cached.at > 1800 || now() < cached.at) {
    cached = { token: await tokenFor(DEMO.client), at: now() };
  }
  return cached.token;
}

export async function api(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return call(method, path, { token: await token(), ...definedFields({ body }) });
}

export async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

export const GOOD_CARD = '4242424242424242';
/** Authorises, then declines every later charge (the contract's "decline later" test card). */
export const FAILING_CARD = '4000000000000341';

export async function savedSource(number = GOOD_CARD, testMode = false): Promise<string> {
  const source = await ok(
    'POST',
    '/payment-sources',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: '100', currency: 'CHF' },
      payment_information: { number, expiry_month: 12, expiry_year: 2099, cvv: '123' },
      test_mode: testMode,
    },
    201,
  );
  return source.uuid as string;
}

export async function supporter(): Promise<string> {
  const created = await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' }, 201);
  return created.uuid as string;
}

export async function subscription(fields: Record<string, unknown> = {}) {
  return ok(
    'POST',
    '/subscriptions',
    {
      account_uuid: DEMO.account,
      payment_source_uuid: fields.payment_source_uuid ?? (await savedSource()),
      supporter_uuid: fields.supporter_uuid ?? (await supporter()),
      currency: 'CHF',
      amount: 2500,
      recurring_interval: 'monthly',
      status: 'active',
      ...fields,
    },
    201,
  );
}

export async function billingRun() {
  return ok('POST', '/_local/billing-run');
}

/** Unix seconds of a local wall-clock time in a zone. */
export function at(iso: string, zone = 'UTC'): number {
  const time = DateTime.fromISO(iso, { zone });
  if (!time.isValid) throw new Error(`bad time ${iso}`);
  return Math.round(time.toSeconds());
}

export function localDay(unixSeconds: number, zone: string): string {
  return DateTime.fromSeconds(unixSeconds, { zone }).toISODate() ?? '';
}

export async function setup(): Promise<void> {
  await seedDemo();
}

export function setClock(iso: string, zone = 'UTC'): number {
  return freezeClock(at(iso, zone));
}

export { DEMO };
