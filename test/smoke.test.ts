import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signatureHolds } from '../apps/ops/src/smoke';
import { interrupt, killStartedServices, ROOT, type Service, startService } from './support/service';

/**
 * `pnpm smoke` against the local runtime, as CI runs it: the real command in its own process,
 * over HTTP only, against `pnpm start` in another. The service trusts the run's receiver
 * certificate (NODE_EXTRA_CA_CERTS, from the shared setup), which the smoke's receiver serves.
 */
const run = promisify(execFile);
let service: Service;
let trusted: string;

async function smoke(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'apps/ops/src/smoke-main.ts', '--', '--base-url', service.url, ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
    );
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

async function bearer(): Promise<string> {
  const response = await fetch(`${service.url}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'demo-client',
      client_secret: 'demo-secret-change-me',
    }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  service = await startService({ SVC_DATA_DIR: ':memory:' });
  trusted = mkdtempSync(join(tmpdir(), 'svc-smoke-tls-'));
  const tls = inject('receiverTls');
  writeFileSync(join(trusted, 'cert.pem'), tls.cert);
  writeFileSync(join(trusted, 'key.pem'), tls.key);
}, 60_000);

afterAll(async () => {
  if (service) await interrupt(service);
  killStartedServices();
  rmSync(trusted, { recursive: true, force: true });
});

describe('pnpm smoke', () => {
  it('passes against the local runtime: token, test-mode payment, refund, both events delivered signed; leaves no endpoint behind', async () => {
    const result = await smoke(['--receiver-tls', trusted]);
    expect(result.stdout).toContain('smoke check passed');
    expect(result.code).toBe(0);
    for (const step of ['a token', 'test-mode card payment succeeds', 'refunds it in full', 'both events delivered'])
      expect(result.stdout).toMatch(new RegExp(`ok {4}.*${step}`));

    const token = await bearer();
    const organisation = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
    const headers = { authorization: `Bearer ${token}` };
    const endpoints = (await (
      await fetch(`${service.url}/webhooks?organisation_uuid=${organisation}`, { headers })
    ).json()) as Array<{ alias?: string }>;
    expect(endpoints.filter((e) => e.alias === 'pnpm smoke')).toEqual([]);
    const subscriptions = (await (
      await fetch(`${service.url}/event-subscriptions?organisation_uuid=${organisation}`, { headers })
    ).json()) as unknown[];
    expect(subscriptions).toEqual([]);
    // The payment it took is test-mode and refunded in full.
    const found = (await (
      await fetch(`${service.url}/search/payments`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { $term: { 'custom_parameters.smoke': 'true' } } }),
      })
    ).json()) as { hits: Array<{ test_mode: boolean; refunded_amount: { value: string } }> };
    expect(found.hits).toEqual([
      expect.objectContaining({ test_mode: true, refunded_amount: { value: '100', currency: 'CHF' } }),
    ]);
  }, 120_000);

  it('fails with exit code 1 and says where: a wrong client secret, an untrusted receiver', async () => {
    const wrong = await smoke(['--receiver-tls', trusted], { SVC_SMOKE_CLIENT_SECRET: 'not-the-secret' });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/FAIL {2}a token for the client .*answered 401/);
    expect(wrong.stdout).toContain('smoke check FAILED');

    // A receiver whose certificate the service does not trust: the deliveries fail, and the
    // check reports the stage's own record of why (no waiting: the deadline is already past
    // when the settled deliveries are read).
    const untrusted = mkdtempSync(join(tmpdir(), 'svc-smoke-untrusted-'));
    try {
      const made = await smoke(['--make-receiver-cert', '--receiver-tls', untrusted]);
      expect(made.stdout.trim()).toBe(join(untrusted, 'cert.pem'));
      expect(readFileSync(join(untrusted, 'cert.pem'), 'utf8')).toContain('BEGIN CERTIFICATE');
      const refused = await smoke(['--receiver-tls', untrusted, '--delivery-seconds', '0.001']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/FAIL {2}both events delivered .*TLS error: self-signed certificate/);
      expect(refused.stdout).toContain(`NODE_EXTRA_CA_CERTS=${join(untrusted, 'cert.pem')}`);
    } finally {
      rmSync(untrusted, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("the smoke check's signature check", () => {
  const body = '{"event":{"name":"svc.payments.payment.succeeded"}}';
  const signed = (key: string, text: string, t = 1_800_000_000) =>
    `t=${t},v1=${createHmac('sha256', key).update(`${t}.${text}`).digest('hex')}`;

  it('holds for the endpoint key over "<t>.<raw body>" and fails for anything else', () => {
    expect(signatureHolds({ body, headers: { 'x-svc-signature': signed('k1', body) } }, 'k1')).toBe(true);
    expect(signatureHolds({ body, headers: { 'x-svc-signature': signed('k2', body) } }, 'k1')).toBe(false);
    expect(signatureHolds({ body: `${body} `, headers: { 'x-svc-signature': signed('k1', body) } }, 'k1')).toBe(false);
    expect(signatureHolds({ body, headers: {} }, 'k1')).toBe(false);
    expect(signatureHolds({ body, headers: { 'x-svc-signature': 't=1,v1=zz' } }, 'k1')).toBe(false);
  });
});
