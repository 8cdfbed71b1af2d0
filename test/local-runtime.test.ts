import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOps } from '@svc/ops';
import { DEMO_SEED, parseSeed } from '@svc/seed';
import { afterAll, describe, expect, it } from 'vitest';
import { interrupt, killStartedServices, startService } from './support/service';

function javaStillRunning(port: string): boolean {
  try {
    const list = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    return list.split('\n').some((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`));
  } catch {
    return false;
  }
}

async function token(url: string, id: string, secret: string): Promise<string> {
  const response = await fetch(`${url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

afterAll(killStartedServices);

describe('pnpm start', () => {
  it('serves the demo seed over HTTP, moves the clock, and Ctrl-C stops it and DynamoDB Local', async () => {
    const service = await startService({ SVC_DATA_DIR: ':memory:' });
    expect(service.output()).toContain('client_id=demo-client  client_secret=demo-secret-change-me');
    expect(await (await fetch(`${service.url}/health`)).json()).toEqual({ status: 'ok' });

    const bearer = await token(service.url, 'demo-client', 'demo-secret-change-me');
    const organisations = await fetch(`${service.url}/organisations`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    expect(organisations.status).toBe(200);
    expect(await organisations.json()).toEqual([expect.objectContaining({ name: 'Demo Foundation' })]);

    // A monthly donation: its first payment now, the next one from the billing run a month on,
    // through the SQS stand-in and the same worker that Lambda runs.
    const donation = await fetch(`${service.url}/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        account_uuid: '9c405f6d-7e8b-4c93-9da4-ce5f60718293',
        payment_method: 'card',
        profile: 'card',
        amount: { value: '2000', currency: 'CHF' },
        create_payment_source: true,
        payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
        subscription: { recurring_interval: 'monthly' },
      }),
    });
    expect(donation.status).toBe(201);
    expect(((await donation.json()) as { subscription_uuid?: string }).subscription_uuid).toEqual(expect.any(String));

    const clock = await fetch(`${service.url}/_local/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: 3601 }),
    });
    expect(clock.status).toBe(200);
    const expired = await fetch(`${service.url}/organisations`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(expired.status).toBe(401);
    const badClock = await fetch(`${service.url}/_local/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"now":"soon"}',
    });
    expect(badClock.status).toBe(400);
    expect(((await badClock.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    // The donation's events go through the stream publisher and the bus (no receivers yet), on
    // the service's timers or on settle; once settled, nothing is left.
    expect(
      (await fetch(`${service.url}/_local/settle`, { method: 'POST', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(200);
    const settledAgain = await fetch(`${service.url}/_local/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(await settledAgain.json()).toEqual({ processed: 0 });
    await fetch(`${service.url}/_local/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: 32 * 86_400 }),
    });
    const run = await fetch(`${service.url}/_local/billing-run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(await run.json()).toEqual({
      due: 1,
      invoices_created: 1,
      charge_attempts_created: 1,
      succeeded: 1,
      failed: 0,
    });
    const rerun = await fetch(`${service.url}/_local/billing-run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(await rerun.json()).toEqual({
      due: 0,
      invoices_created: 0,
      charge_attempts_created: 0,
      succeeded: 0,
      failed: 0,
    });

    expect(javaStillRunning(service.dynamoPort)).toBe(true);
    expect(await interrupt(service)).toBe(0);
    expect(javaStillRunning(service.dynamoPort)).toBe(false);
    // Starting Java, the seed and the search engine takes most of it: 30 s was too tight on a busy CI machine.
  }, 120_000);

  it('keeps data and signing keys on disk across restarts; pnpm ops seeds it, issues clients and configures file sources', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    try {
      const organisation = '0f0e0d0c-0b0a-4908-8706-050403020100';
      const seedFile = join(dataDir, 'seed.json');
      writeFileSync(
        seedFile,
        JSON.stringify({
          organisations: [{ uuid: organisation, name: 'Seeded by ops', accounts: [] }],
          clients: [
            {
              client_id: 'file-client',
              client_secret: 'file-secret-123456',
              grants: [{ organisation_uuid: organisation }],
            },
          ],
        }),
      );
      const lines: string[] = [];
      const env = { SVC_DATA_DIR: dataDir, SVC_SEED_FILE: seedFile };
      Object.assign(process.env, env);
      await runOps(['seed', '--file', seedFile], (line) => lines.push(line));
      await runOps(['clients', 'create', '--grant', organisation], (line) => lines.push(line));
      const configuration = 'c0c1c2c3-c4c5-4c6c-8c7c-c8c9cacbcccd';
      await runOps(
        [
          'source-configurations',
          'create',
          '--organisation',
          organisation,
          '--name',
          'Bank',
          '--file-type',
          'csv',
          '--uuid',
          configuration,
        ],
        (line) => lines.push(line),
      );
      await expect(
        runOps([
          'source-configurations',
          'create',
          '--organisation',
          organisation,
          '--name',
          'x',
          '--file-type',
          'pdf',
        ]),
      ).rejects.toThrow();
      const id = /client_id=(\S+)/.exec(lines.join('\n'))?.[1] as string;
      const secret = /client_secret=(\S+)/.exec(lines.join('\n'))?.[1] as string;
      expect(secret).toMatch(/^secret_/);

      const first = await startService(env);
      expect(first.output()).not.toContain('file-secret-123456');
      const bearer = await token(first.url, id, secret);
      const read = await fetch(`${first.url}/organisations/${organisation}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(((await read.json()) as { name: string }).name).toBe('Seeded by ops');

      // A file uploaded the way a browser does, to the local object store, reconciled in the background.
      const parameters = (await (
        await fetch(`${first.url}/reconciliation/source-configurations/${configuration}/upload-parameters`, {
          headers: { authorization: `Bearer ${bearer}` },
        })
      ).json()) as { inputs: Record<string, string>; attributes: { action: string } };
      const form = new FormData();
      for (const [field, value] of Object.entries(parameters.inputs)) form.append(field, value);
      form.append(
        'file',
        new Blob(['date,amount,currency,reference\n2026-01-05,10.00,CHF,no uuid here\n']),
        'bank.csv',
      );
      expect((await fetch(parameters.attributes.action, { method: 'POST', body: form })).status).toBe(204);
      expect(
        (await fetch(`${first.url}/_local/settle`, { method: 'POST', headers: { 'content-type': 'application/json' } }))
          .status,
      ).toBe(200);
      const reports = (await (
        await fetch(`${first.url}/reconciliation/reports?organisation_uuid=${organisation}`, {
          headers: { authorization: `Bearer ${bearer}` },
        })
      ).json()) as Array<{ file: { name: string }; summary: { rows: number; unmatched: number } }>;
      expect(reports.map((r) => [r.file.name, r.summary.rows, r.summary.unmatched])).toEqual([['bank.csv', 1, 1]]);
      expect(await interrupt(first)).toBe(0);

      const second = await startService(env);
      const again = await fetch(`${second.url}/organisations/${organisation}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(again.status).toBe(200);
      // The uploaded file and its report survived the restart too.
      const kept = await fetch(`${second.url}/reconciliation/reports?organisation_uuid=${organisation}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(((await kept.json()) as unknown[]).length).toBe(1);
      expect(await interrupt(second)).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('keeps search on disk across restarts, fills an empty engine from the table, and pnpm ops rebuilds it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const saved = { SVC_DATA_DIR: process.env.SVC_DATA_DIR, SVC_SEED_FILE: process.env.SVC_SEED_FILE };
    // The demo seed, whatever an earlier test left in the environment.
    delete process.env.SVC_SEED_FILE;
    try {
      const env = { SVC_DATA_DIR: dataDir };
      const first = await startService(env);
      const bearer = await token(first.url, 'demo-client', 'demo-secret-change-me');
      const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
      const paid = await fetch(`${first.url}/payments`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          account_uuid: '9c405f6d-7e8b-4c93-9da4-ce5f60718293',
          payment_method: 'card',
          profile: 'card',
          amount: { value: '700', currency: 'CHF' },
          payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
          custom_parameters: { kept: 'on-disk' },
        }),
      });
      expect(paid.status).toBe(201);
      const uuid = ((await paid.json()) as { uuid: string }).uuid;
      const searchFor = async (url: string) => {
        const bearerNow = await token(url, 'demo-client', 'demo-secret-change-me');
        const response = await fetch(`${url}/search/payments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearerNow}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: { $term: { 'custom_parameters.kept': 'on-disk' } } }),
        });
        return ((await response.json()) as { hits: Array<{ uuid: string }> }).hits.map((hit) => hit.uuid);
      };
      expect(await searchFor(first.url)).toEqual([uuid]);
      expect(await interrupt(first)).toBe(0);

      const second = await startService(env);
      expect(await searchFor(second.url)).toEqual([uuid]);
      expect(await interrupt(second)).toBe(0);

      // The engine's data gone (or never there, as before it existed): refilled at start.
      rmSync(join(dataDir, 'search'), { recursive: true, force: true });
      const third = await startService(env);
      expect(await searchFor(third.url)).toEqual([uuid]);
      expect(await interrupt(third)).toBe(0);

      Object.assign(process.env, env);
      const lines: string[] = [];
      await runOps(['search:rebuild', '--segments', '2'], (line) => lines.push(line));
      // Every projection: the one payment and the seed's organisations (no subscriptions, no plans).
      expect(lines.join('\n')).toMatch(
        new RegExp(`Rebuilt search on local data .*"projected":${1 + parseSeed(DEMO_SEED).organisations.length}\\b`),
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
