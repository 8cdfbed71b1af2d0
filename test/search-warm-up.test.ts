import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wireDomains } from '@svc/api/wiring';
import { logger } from '@svc/core';
import { closeSearchDb, searchDb, warmUpOnOpen } from '@svc/sql';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * The embedded engine warms itself when it opens (after its migrations), so that a process's
 * first search does not pay for a cold planner and cold code: each domain's search shapes over
 * an organisation with no rows.
 */
const dirs: string[] = [];

/** A new embedded engine of its own (a data directory no other test uses), not yet opened. */
function freshEngine() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-warm-up-'));
  dirs.push(dir);
  return searchDb({ ...process.env, SVC_DATA_DIR: dir });
}

// The domains' warm-ups, handed over as the local runtime hands them over.
beforeAll(() => {
  wireDomains();
});

afterEach(() => {
  vi.restoreAllMocks();
  warmUpOnOpen('test-record', async () => undefined);
  warmUpOnOpen('test-fail', async () => undefined);
});

afterAll(async () => {
  await closeSearchDb();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the embedded search engine’s warm-up', () => {
  it('runs each registered warm-up once, on the migrated schema, when the engine opens', async () => {
    const seen: string[] = [];
    warmUpOnOpen('test-record', async (db) => {
      const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM payment_search`.execute(db);
      seen.push(rows[0]?.n ?? 'none');
    });
    const db = freshEngine();
    expect(seen).toEqual([]);
    await sql`SELECT 1`.execute(db);
    await sql`SELECT 1`.execute(db);
    expect(seen).toEqual(['0']);
  });

  it('opens the engine though a warm-up fails, says which, and still runs the others', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const after: string[] = [];
    warmUpOnOpen('test-fail', async () => {
      throw new Error('no such shape');
    });
    warmUpOnOpen('test-record', async () => {
      after.push('ran');
    });
    const db = freshEngine();
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
    expect(rows).toEqual([{ one: 1 }]);
    expect(after).toEqual(['ran']);
    expect(warn).toHaveBeenCalledWith('A search warm-up failed', {
      warmUp: 'test-fail',
      error: 'Error: no such shape',
    });
  });

  it('runs the payments’ and subscriptions’ own warm-ups without a failure, over an organisation with no rows', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const debug = vi.spyOn(logger, 'debug');
    const db = freshEngine();
    await sql`SELECT 1`.execute(db);
    expect(warn).not.toHaveBeenCalledWith('A search warm-up failed', expect.anything());
    const warmed = debug.mock.calls.find(([message]) => message === 'The search engine warmed up');
    expect(warmed?.[1]).toMatchObject({ warmed: expect.arrayContaining(['payments', 'subscriptions']) });
  });

  it('does not warm Aurora: a query through the Data API engine runs no warm-up', async () => {
    let ran = 0;
    warmUpOnOpen('test-record', async () => {
      ran++;
    });
    const previous = process.env.AWS_ENDPOINT_URL_RDS_DATA;
    // Nothing listens there: the Data API call is refused at once.
    process.env.AWS_ENDPOINT_URL_RDS_DATA = 'http://127.0.0.1:9';
    try {
      const db = searchDb({
        ...process.env,
        SVC_SEARCH_CLUSTER_ARN: 'arn:aws:rds:eu-central-2:000000000000:cluster:svc-warm',
        SVC_SEARCH_SECRET_ARN: 'arn:aws:secretsmanager:eu-central-2:000000000000:secret:svc-warm',
      });
      await expect(sql`SELECT 1`.execute(db)).rejects.toThrow();
      expect(ran).toBe(0);
      // The same registration does run where the engine is embedded: the check above can fail.
      await sql`SELECT 1`.execute(freshEngine());
      expect(ran).toBe(1);
    } finally {
      if (previous === undefined) delete process.env.AWS_ENDPOINT_URL_RDS_DATA;
      else process.env.AWS_ENDPOINT_URL_RDS_DATA = previous;
    }
  });
});
