import type { Principal } from '@svc/core';
import { searchPayments } from '@svc/payments';
import { warmUpPaymentSearch } from '@svc/payments/search';
import { searchDb, warmUpOnOpen } from '@svc/sql';
import { sql } from 'kysely';
import { LARGE_ORG } from './search';

// The engine's warm-up of payment searches, as the local runtime registers it.
warmUpOnOpen('payments', warmUpPaymentSearch);

/**
 * A fresh process over the bench's engine: how long the engine takes to open, the first search,
 * then each query kind `runs` times. Prints JSON (every sample, in ms) for bench/search.ts.
 */
const runs = Number(process.argv[2] ?? 7);
const last = Number(process.env.BENCH_LAST_CREATED);
const caller: Principal = {
  clientId: 'bench',
  role: 'client',
  kind: 'partner',
  grants: [{ organisation_uuid: LARGE_ORG }],
} as unknown as Principal;

const QUERIES: Record<string, unknown> = {
  'selective (status+amount+30 days)': {
    query: {
      $and: [
        { $term: { status: 'failed' } },
        { $range: { 'amount.value': { gte: 1000, lte: 5000 } } },
        { $range: { created: { gte: last - 30 * 86_400 } } },
      ],
    },
    size: 50,
  },
  'custom_parameters filter': { query: { $term: { 'custom_parameters.campaign': 'rare-appeal' } }, size: 50 },
  'newest 50 of all': { query: { $match: {} }, size: 50 },
  'term aggregations (method, status)': {
    query: { $match: {} },
    size: 0,
    aggs: { methods: { type: 'term', field: 'payment_method' }, statuses: { type: 'term', field: 'status' } },
  },
  'sum aggregation (amount)': {
    query: { $match: {} },
    size: 0,
    aggs: { total: { type: 'sum', field: 'amount.value' } },
  },
};

async function timed(body: unknown): Promise<{ ms: number; hits: number }> {
  const began = performance.now();
  const response = await searchPayments(Promise.resolve(caller), body);
  return { ms: performance.now() - began, hits: response.summary.hits };
}

const opening = performance.now();
await sql`SELECT 1`.execute(searchDb());
const openMs = performance.now() - opening;
const firstKind = QUERIES['selective (status+amount+30 days)'];
if (!firstKind) throw new Error('The first query kind is missing');
const first = await timed(firstKind);
const queries: Record<string, { samples: number[]; hits: number }> = {};
for (const [name, body] of Object.entries(QUERIES)) {
  const samples: number[] = [];
  let hits = 0;
  for (let i = 0; i < runs; i++) {
    const run = await timed(body);
    samples.push(run.ms);
    hits = run.hits;
  }
  queries[name] = { samples, hits };
}
process.stdout.write(
  JSON.stringify({ openMs, firstMs: first.ms, firstKind: 'selective (status+amount+30 days)', queries }),
);
process.exit(0);
