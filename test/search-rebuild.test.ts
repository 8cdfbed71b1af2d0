import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAYMENT_PROJECTION } from '@svc/payments/search';
import { rebuildSearch, searchDb } from '@svc/sql';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * `pnpm ops search:rebuild`: the search engine refilled from the table, in parallel segments,
 * going on from where an interrupted run stopped.
 */
let token: string;
const created: string[] = [];

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  for (let i = 0; i < 12; i++) {
    const response = await call('POST', '/payments', {
      token,
      body: cardPaymentBody({
        amount: { value: String(1000 + i), currency: 'CHF' },
        custom_parameters: { batch: 'rebuild' },
      }),
    });
    created.push(response.json.uuid);
  }
});

const rows = async () =>
  Number(
    (await sql<{ n: string }>`SELECT count(*)::text AS n FROM payment_search`.execute(searchDb())).rows[0]?.n ?? 0,
  );
const found = async () =>
  (
    await call('POST', '/search/payments', {
      token,
      body: { query: { $term: { 'custom_parameters.batch': 'rebuild' } }, size: 50 },
    })
  ).json.summary.hits;

describe('rebuilding search from the table', () => {
  it('refills an emptied engine from every segment', async () => {
    const before = await rows();
    expect(await found()).toBe(12);
    await sql`TRUNCATE payment_search`.execute(searchDb());
    expect(await found()).toBe(0);
    const progressFile = join(mkdtempSync(join(tmpdir(), 'svc-rebuild-')), 'progress.json');
    const seen: number[] = [];
    const summary = await rebuildSearch({
      projections: [PAYMENT_PROJECTION],
      segments: 3,
      progressFile,
      onProgress: (scanned) => seen.push(scanned),
    });
    expect(summary).toMatchObject({ projected: before, segments: 3, resumed: false });
    expect(await rows()).toBe(before);
    expect(await found()).toBe(12);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(existsSync(progressFile)).toBe(false);
  });

  it('goes on from where an interrupted run stopped, and finishes with every row', async () => {
    const total = await rows();
    await sql`TRUNCATE payment_search`.execute(searchDb());
    const progressFile = join(mkdtempSync(join(tmpdir(), 'svc-rebuild-')), 'progress.json');
    // The engine fails on the page after the first one that held payments (the scan's order
    // follows the keys' hashes, so which page that is varies): the run stops with its position saved.
    let engineGone = false;
    const failing = async (items: ReadonlyArray<Record<string, unknown>>) => {
      if (engineGone) throw new Error('engine gone');
      const projected = await PAYMENT_PROJECTION.project(items);
      engineGone = (await rows()) > 0;
      return projected;
    };
    await expect(
      rebuildSearch({ projections: [PAYMENT_PROJECTION], segments: 1, progressFile, pageSize: 4, project: failing }),
    ).rejects.toThrow('engine gone');
    expect(existsSync(progressFile)).toBe(true);
    const partial = await rows();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(total);
    const summary = await rebuildSearch({ projections: [PAYMENT_PROJECTION], segments: 1, progressFile, pageSize: 4 });
    expect(summary.resumed).toBe(true);
    expect(await rows()).toBe(total);
    expect(await found()).toBe(12);
  });
});
