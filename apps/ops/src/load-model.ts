import type { IndexName } from '@svc/table';

/**
 * What one donation costs the stage, and what `pnpm ops prewarm` computes from it for an event of
 * N donations a second (docs/load-model.md has the reasoning, per key and per resource).
 *
 * Measured by the write-heat check (test/write-heat.test.ts, `.test-results/write-heat.json`): 800
 * card donations each with a new supporter, one in four saving the card, one in eight refunded, a
 * search every 100, one webhook endpoint receiving every event at its default pace of 50 a second
 * (so nearly every delivery waits in the due index: the costly case). Units as DynamoDB bills them
 * (1 KB writes, transactional ones twice; reads of items of up to 4 KB), from the table's stream.
 */
export interface LoadModel {
  /**
   * Capacity units per donation (write: 1 KB writes, transactional ones counted twice; read: 4 KB
   * strongly consistent reads), on the table and on each index. A new index does not compile
   * until it is named here.
   */
  perDonation: Record<'table' | IndexName, { write: number; read: number }>;
  /** Seconds of the payments function per donation, all of its calls for one donation together. */
  paymentsSecondsPerDonation: number;
  /** API requests per donation (a form posting the payment, some retries and lookups). */
  apiRequestsPerDonation: number;
  /** The API's burst (token bucket size) as a share of its rate. */
  apiBurstPerRate: number;
  /** Multiplies every figure: the event's peak is a guess, and what is not warm throttles. */
  headroom: number;
}

export const LOAD_MODEL: LoadModel = {
  perDonation: {
    // 18.55 write units a donation: deliveries 8.1 (7.2 per delivery, held back and brought back),
    // payments 4.5, webhook responses 3.25, supporters 2.0, saved cards 0.5. 10.5 item reads and
    // queries a donation (the pipeline's mostly; the client and account are remembered).
    table: { write: 18.6, read: 10.5 },
    // Supporters (1.0) and the organisation's webhook responses (3.25).
    gsi1: { write: 4.3, read: 0 },
    // The endpoint's webhook responses; fan-out's subscription queries.
    gsi2: { write: 3.3, read: 0.2 },
    // Held-back deliveries in and out (6.4), refunds waiting on the provider (0.25).
    due: { write: 6.7, read: 0.1 },
  },
  // POST /payments p50 with Stripe's stand-in answering in 150 ms (bench `stripe`, docs/performance.md).
  paymentsSecondsPerDonation: 0.17,
  // 1 payment + 1/8 refund + 1/100 search + a token an hour, and room for the form's own lookups.
  apiRequestsPerDonation: 1.2,
  apiBurstPerRate: 0.5,
  headroom: 1.5,
};

/** More than any telethon has taken: a larger figure is a typo (an extra zero), not a plan. */
export const MAX_DONATIONS_PER_SECOND = 100_000;

/**
 * AWS's default quotas, used where the account's own cannot be read (a dry run) and for the API,
 * whose account throttle no apigatewayv2 call returns: change `apiRate` here once Service Quotas
 * has raised it for the account (quota L-8A5B8E43).
 */
export const AWS_DEFAULT_QUOTAS = {
  /**
   * On-demand table-level throughput, per table and per index: 40,000 read and 40,000 write
   * request units unless raised, and warm throughput can be raised only up to it.
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
   */
  tableReadUnits: 40_000,
  tableWriteUnits: 40_000,
  /**
   * Concurrent executions per account and Region (new accounts may have far less), of which 100
   * always stay unreserved: provisioned concurrency takes at most the unreserved rest minus 100.
   * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
   * https://docs.aws.amazon.com/lambda/latest/dg/provisioned-concurrency.html
   */
  accountConcurrency: 1_000,
  unreservedMinimum: 100,
  /**
   * API Gateway's throttle per account and Region, all APIs together: 10,000 requests a second
   * (raisable) and a burst of 5,000 (set by AWS, not raisable); a stage's or route's throttle
   * cannot go above it. Some Regions start at 2,500 / 1,250.
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html
   */
  apiRate: 10_000,
  apiBurst: 5_000,
} as const;

export interface Quotas {
  tableReadUnits: number;
  tableWriteUnits: number;
  /** Provisioned concurrency the payments alias may take: unreserved concurrency minus 100. */
  provisionableConcurrency: number;
  apiRate: number;
  apiBurst: number;
}

export const DEFAULT_QUOTAS: Quotas = {
  tableReadUnits: AWS_DEFAULT_QUOTAS.tableReadUnits,
  tableWriteUnits: AWS_DEFAULT_QUOTAS.tableWriteUnits,
  provisionableConcurrency: AWS_DEFAULT_QUOTAS.accountConcurrency - AWS_DEFAULT_QUOTAS.unreservedMinimum,
  apiRate: AWS_DEFAULT_QUOTAS.apiRate,
  apiBurst: AWS_DEFAULT_QUOTAS.apiBurst,
};

export interface WarmUnits {
  readUnitsPerSecond: number;
  writeUnitsPerSecond: number;
}

export interface Capacity {
  donationsPerSecond: number;
  /** Warm throughput the table and each index must take at once. */
  warm: Record<'table' | IndexName, WarmUnits>;
  /** Execution environments of the payments function kept initialised. */
  provisionedConcurrency: number;
  /** The API stage's throttle. */
  api: { rateLimit: number; burstLimit: number };
}

/** Rounded up, but not past a float's noise (0.15 × 5000 × 1.5 is 1125, not 1126). */
const unitsFor = (value: number) => Math.max(0, Math.ceil(value - 1e-9));

/** What N donations a second need, headroom included; pure arithmetic on the model. */
export function capacityFor(donationsPerSecond: number, model: LoadModel = LOAD_MODEL): Capacity {
  const peak = donationsPerSecond * model.headroom;
  const warm = Object.fromEntries(
    Object.entries(model.perDonation).map(([resource, units]) => [
      resource,
      { readUnitsPerSecond: unitsFor(units.read * peak), writeUnitsPerSecond: unitsFor(units.write * peak) },
    ]),
  ) as Record<'table' | IndexName, WarmUnits>;
  const rateLimit = unitsFor(model.apiRequestsPerDonation * peak);
  return {
    donationsPerSecond,
    warm,
    provisionedConcurrency: unitsFor(model.paymentsSecondsPerDonation * peak),
    api: { rateLimit, burstLimit: unitsFor(rateLimit * model.apiBurstPerRate) },
  };
}

/**
 * Holds the capacity to the quotas: what no quota allows is refused (each with what to raise),
 * the burst, which AWS alone sets, is lowered to it.
 */
export function withinQuotas(
  capacity: Capacity,
  quotas: Quotas,
): { capacity: Capacity; refusals: string[]; notes: string[] } {
  const refusals: string[] = [];
  const notes: string[] = [];
  for (const [resource, units] of Object.entries(capacity.warm)) {
    for (const [kind, needed, quota] of [
      ['write', units.writeUnitsPerSecond, quotas.tableWriteUnits],
      ['read', units.readUnitsPerSecond, quotas.tableReadUnits],
    ] as const) {
      if (needed > quota) {
        refusals.push(
          `${resource} needs ${format(needed)} ${kind} units/s, above the table-level quota of ${format(quota)}: ask Service Quotas for DynamoDB's table-level ${kind} throughput to be raised`,
        );
      }
    }
  }
  if (capacity.provisionedConcurrency > quotas.provisionableConcurrency) {
    refusals.push(
      `payments needs ${format(capacity.provisionedConcurrency)} provisioned concurrency, above the ${format(quotas.provisionableConcurrency)} the account can give (unreserved concurrency minus the 100 Lambda keeps): ask Service Quotas for Lambda's concurrent executions to be raised`,
    );
  }
  if (capacity.api.rateLimit > quotas.apiRate) {
    refusals.push(
      `the API needs ${format(capacity.api.rateLimit)} requests/s, above the account's ${format(quotas.apiRate)} for all its APIs: ask Service Quotas for API Gateway's throttle to be raised (then raise apiRate in apps/ops/src/load-model.ts)`,
    );
  }
  let { burstLimit } = capacity.api;
  if (burstLimit > quotas.apiBurst) {
    notes.push(
      `the API's burst is held to the account's ${format(quotas.apiBurst)} (AWS sets it; it cannot be raised), not ${format(burstLimit)}`,
    );
    burstLimit = quotas.apiBurst;
  }
  return { capacity: { ...capacity, api: { ...capacity.api, burstLimit } }, refusals, notes };
}

export const format = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 2 });

/**
 * Prices the plan's estimate uses, US East (N. Virginia), read 2026-11-27. The stage's Region is
 * the deploying profile's (infra/config/stages.ts fixes none): check the Region's prices.
 */
export const PRICES = {
  asOf: '2026-11-27',
  region: 'us-east-1',
  /**
   * Raising warm throughput is charged once, for the raise; keeping it costs nothing
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html). The
   * price itself was not found in the sources at hand: this assumes an hour of the same units in
   * provisioned mode ($0.00065 per WCU-hour, $0.00013 per RCU-hour). UNVERIFIED: see
   * https://aws.amazon.com/dynamodb/pricing/on-demand/ before relying on it.
   */
  warmWriteUnit: 0.00065,
  warmReadUnit: 0.00013,
  /**
   * Provisioned concurrency on Arm (the functions are arm64), per GB-second configured, billed
   * from when it is put until it is deleted, in 5-minute steps; invocations on it then pay a lower
   * duration rate than on demand (https://aws.amazon.com/lambda/pricing/; the figure from
   * awsnegotiations.com's summary of that page).
   */
  provisionedGbSecond: 0.0000033334,
  /** API Gateway's throttle settings are free: requests cost the same either way. */
  apiThrottle: 0,
} as const;

export interface CostLine {
  what: string;
  dollars: number;
  basis: string;
}

/**
 * What the plan costs: the raise of warm throughput over `current` (once), and provisioned
 * concurrency for `hours`. Each line says how it was reckoned.
 */
export function costOf(
  capacity: Capacity,
  current: Record<'table' | IndexName, WarmUnits>,
  memoryMb: number,
  hours: number,
): CostLine[] {
  let writes = 0;
  let reads = 0;
  for (const [resource, units] of Object.entries(capacity.warm) as Array<['table' | IndexName, WarmUnits]>) {
    writes += Math.max(0, units.writeUnitsPerSecond - current[resource].writeUnitsPerSecond);
    reads += Math.max(0, units.readUnitsPerSecond - current[resource].readUnitsPerSecond);
  }
  const gbSeconds = capacity.provisionedConcurrency * (memoryMb / 1024) * hours * 3600;
  return [
    {
      what: 'DynamoDB warm throughput (once; none after)',
      dollars: writes * PRICES.warmWriteUnit + reads * PRICES.warmReadUnit,
      basis: `${format(writes)} write + ${format(reads)} read units/s raised × $${PRICES.warmWriteUnit}/$${PRICES.warmReadUnit} (assumed price, unverified)`,
    },
    {
      what: 'Lambda provisioned concurrency (until --reset)',
      dollars: gbSeconds * PRICES.provisionedGbSecond,
      basis: `${format(capacity.provisionedConcurrency)} × ${memoryMb} MB × ${format(hours)} h = ${format(gbSeconds)} GB-s × $${PRICES.provisionedGbSecond}`,
    },
    { what: 'API Gateway throttle', dollars: PRICES.apiThrottle, basis: 'settings are free' },
  ];
}
