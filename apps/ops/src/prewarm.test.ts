import { describe, expect, it } from 'vitest';
import { STAGES } from '../../../infra/config/stages';
import {
  capacityFor,
  costOf,
  DEFAULT_QUOTAS,
  LOAD_MODEL,
  type LoadModel,
  type Quotas,
  withinQuotas,
} from './load-model';

/**
 * The command's arithmetic and calls, on fixed per-donation figures (the measured ones in
 * LOAD_MODEL change with the code: their own test is below).
 */
const MODEL: LoadModel = {
  perDonation: {
    table: { write: 12, read: 10 },
    gsi1: { write: 3, read: 0 },
    gsi2: { write: 3, read: 0 },
    due: { write: 2, read: 0 },
  },
  paymentsSecondsPerDonation: 0.15,
  apiRequestsPerDonation: 1.2,
  apiBurstPerRate: 0.5,
  headroom: 1.5,
};

import {
  type AwsCall,
  deployedProviderLimits,
  type Observed,
  type PrewarmAws,
  runPrewarm,
  statusLines,
  type Targets,
} from './prewarm';

const NOW = new Date('2026-12-05T12:00:00Z');
const UNTIL = '2026-12-05T23:00:00+01:00';
const ARN = 'arn:aws:lambda:eu-central-2:123456789012:function:svc-fundraising-prod-Payments';

/** An account whose quotas were raised for the event. */
const RAISED: Quotas = {
  tableReadUnits: 200_000,
  tableWriteUnits: 200_000,
  provisionableConcurrency: 3_000,
  apiRate: 10_000,
  apiBurst: 5_000,
};

const TARGETS: Targets = {
  table: 'svc-fundraising-prod-Data',
  functionArn: ARN,
  alias: 'live',
  apiId: 'a1b2c3',
  apiStage: '$default',
  // What the stack's ApiThrottle output says: the stage's configured throttle.
  configuredThrottle: STAGES.prod.throttle,
  schedules: {
    roleArn: 'arn:aws:iam::123456789012:role/svc-fundraising-prod-PrewarmResetRole',
    resetGroup: 'svc-fundraising-prod-prewarm-reset',
    checkGroup: 'svc-fundraising-prod-prewarm-check',
  },
};

const cold = (status = 'ACTIVE') => ({ readUnitsPerSecond: 12_000, writeUnitsPerSecond: 4_000, status });

function observed(overrides: Partial<Observed> = {}): Observed {
  return {
    warm: { table: cold(), gsi1: cold(), gsi2: cold(), due: cold() },
    quotas: RAISED,
    provisioned: undefined,
    until: undefined,
    routeSettings: {
      DetailedMetricsEnabled: false,
      ThrottlingRateLimit: STAGES.prod.throttle.rateLimit,
      ThrottlingBurstLimit: STAGES.prod.throttle.burstLimit,
    },
    clientRateLimit: '10000/20000',
    // Stripe's default (the stage config); Adyen with no limit of ours.
    providerRateLimits: { limits: { stripe: { live: 22, test: 20 } } },
    ...overrides,
  };
}

/** Records what the command reads and the calls it makes, in order; answers from `state`. */
function recordingAws(state: Observed) {
  const log: string[] = [];
  const calls: AwsCall[] = [];
  let created = 0;
  const aws: PrewarmAws = {
    async targets(stage) {
      log.push(`targets ${stage}`);
      return TARGETS;
    },
    async observe() {
      log.push('observe');
      return state;
    },
    async apply(call) {
      calls.push(call);
    },
  };
  return {
    deps: {
      aws: () => {
        created++;
        return aws;
      },
      now: () => NOW,
      model: MODEL,
    },
    log,
    calls,
    created: () => created,
  };
}

async function run(args: Parameters<typeof runPrewarm>[0], state = observed()) {
  const aws = recordingAws(state);
  const lines: string[] = [];
  await runPrewarm(args, (line) => lines.push(line), aws.deps);
  return { ...aws, lines, text: lines.join('\n') };
}

const prewarm5000 = { stage: 'prod', 'donations-per-second': '5000', until: UNTIL };

describe('the load model', () => {
  it('holds the measured figures: 5,000 donations/s need these, headroom included', () => {
    expect(capacityFor(5000, LOAD_MODEL)).toEqual({
      donationsPerSecond: 5000,
      warm: {
        table: { writeUnitsPerSecond: 139_500, readUnitsPerSecond: 78_750 },
        gsi1: { writeUnitsPerSecond: 32_250, readUnitsPerSecond: 0 },
        gsi2: { writeUnitsPerSecond: 24_750, readUnitsPerSecond: 1_500 },
        due: { writeUnitsPerSecond: 50_250, readUnitsPerSecond: 750 },
      },
      provisionedConcurrency: 1_275,
      api: { rateLimit: 9_000, burstLimit: 4_500 },
    });
  });

  it('gives 5,000 donations/s its warm throughput, provisioned concurrency and throttle, headroom included', () => {
    expect(capacityFor(5000, MODEL)).toEqual({
      donationsPerSecond: 5000,
      warm: {
        table: { writeUnitsPerSecond: 90_000, readUnitsPerSecond: 75_000 },
        gsi1: { writeUnitsPerSecond: 22_500, readUnitsPerSecond: 0 },
        gsi2: { writeUnitsPerSecond: 22_500, readUnitsPerSecond: 0 },
        due: { writeUnitsPerSecond: 15_000, readUnitsPerSecond: 0 },
      },
      provisionedConcurrency: 1_125,
      api: { rateLimit: 9_000, burstLimit: 4_500 },
    });
  });

  it('refuses what the default quotas do not allow, naming the quota to raise, and holds the burst to AWS’s', () => {
    const { refusals } = withinQuotas(capacityFor(5000, MODEL), DEFAULT_QUOTAS);
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatch(/^table needs 90,000 write units\/s, above the table-level quota of 40,000/);
    expect(refusals[1]).toMatch(/^table needs 75,000 read units\/s/);
    expect(refusals[2]).toMatch(/^payments needs 1,125 provisioned concurrency, above the 900/);

    const big = withinQuotas(capacityFor(8000, MODEL), { ...RAISED, apiRate: 20_000 });
    expect(big.refusals).toEqual([]);
    expect(big.capacity.api).toEqual({ rateLimit: 14_400, burstLimit: 5_000 });
    expect(big.notes[0]).toMatch(/burst is held to the account's 5,000/);
    expect(withinQuotas(capacityFor(6000, MODEL), RAISED).refusals[0]).toMatch(/API needs 10,800 requests\/s/);
  });

  it('prices a 6-hour event: warm throughput once for the raise, provisioned concurrency by the hour, throttling free', () => {
    const zero = { readUnitsPerSecond: 0, writeUnitsPerSecond: 0 };
    const [dynamodb, lambda, api] = costOf(
      capacityFor(5000, MODEL),
      { table: zero, gsi1: zero, gsi2: zero, due: zero },
      1024,
      6,
    );
    // 150,000 write units × $0.00065 + 75,000 read units × $0.00013
    expect(dynamodb?.dollars).toBeCloseTo(107.25, 2);
    // 1,125 × 1 GB × 21,600 s × $0.0000033334
    expect(lambda?.dollars).toBeCloseTo(81.0, 1);
    expect(api?.dollars).toBe(0);
  });
});

describe('pnpm ops prewarm', () => {
  it('raises warm throughput, schedules the reset, then provisioned concurrency on the live alias, records --until, then the throttle', async () => {
    const { calls, log, text } = await run(prewarm5000);
    expect(log).toEqual(['targets prod', 'observe']);
    expect(calls.filter((call) => call.service !== 'Scheduler')).toEqual([
      {
        service: 'DynamoDB',
        operation: 'UpdateTable',
        input: {
          TableName: 'svc-fundraising-prod-Data',
          WarmThroughput: { ReadUnitsPerSecond: 75_000, WriteUnitsPerSecond: 90_000 },
          GlobalSecondaryIndexUpdates: [
            { Update: { IndexName: 'gsi1', WarmThroughput: { WriteUnitsPerSecond: 22_500 } } },
            { Update: { IndexName: 'gsi2', WarmThroughput: { WriteUnitsPerSecond: 22_500 } } },
            { Update: { IndexName: 'due', WarmThroughput: { WriteUnitsPerSecond: 15_000 } } },
          ],
        },
      },
      {
        service: 'Lambda',
        operation: 'PutProvisionedConcurrencyConfig',
        input: { FunctionName: ARN, Qualifier: 'live', ProvisionedConcurrentExecutions: 1_125 },
      },
      {
        service: 'Lambda',
        operation: 'TagResource',
        input: { Resource: ARN, Tags: { 'svc:prewarm-until': '2026-12-05T22:00:00.000Z' } },
      },
      {
        service: 'ApiGatewayV2',
        operation: 'UpdateStage',
        input: {
          ApiId: 'a1b2c3',
          StageName: '$default',
          // The stage's other route settings are sent back as they were.
          DefaultRouteSettings: {
            DetailedMetricsEnabled: false,
            ThrottlingRateLimit: 9_000,
            ThrottlingBurstLimit: 4_500,
          },
        },
      },
    ]);
    expect(text).toContain('Warm throughput cannot be lowered again: --reset leaves it');
    expect(text).toContain(
      'The reset is scheduled at 2026-12-05T22:00:00.000Z (EventBridge Scheduler: provisioned concurrency deleted, throttle back), checked a day later; to end earlier run: pnpm ops prewarm --stage prod --reset',
    );
    // The reset is in place before anything billed by the hour is put.
    expect(calls.map((call) => call.operation)).toEqual([
      'UpdateTable',
      'CreateSchedule',
      'CreateSchedule',
      'CreateSchedule',
      'PutProvisionedConcurrencyConfig',
      'TagResource',
      'UpdateStage',
    ]);
    // 10 hours to --until: 1,125 × 1 GB × 36,000 s × $0.0000033334
    expect(text).toMatch(/cost: Lambda provisioned concurrency \(until --reset\): \$135\.00/);
  });

  it('never asks for less than the table, an index, the alias or the stage already has', async () => {
    const { calls, text } = await run(
      prewarm5000,
      observed({
        warm: {
          table: { readUnitsPerSecond: 10_000, writeUnitsPerSecond: 120_000, status: 'ACTIVE' },
          gsi1: { readUnitsPerSecond: 12_000, writeUnitsPerSecond: 30_000, status: 'ACTIVE' },
          gsi2: cold(),
          due: { readUnitsPerSecond: 12_000, writeUnitsPerSecond: 15_000, status: 'ACTIVE' },
        },
        provisioned: { requested: 2_000, allocated: 2_000, status: 'READY' },
        routeSettings: { ThrottlingRateLimit: 9_500, ThrottlingBurstLimit: 1_000 },
      }),
    );
    expect(calls.map((call) => call.operation)).toEqual([
      'UpdateTable',
      'CreateSchedule',
      'CreateSchedule',
      'CreateSchedule',
      'TagResource',
      'UpdateStage',
    ]);
    expect(calls[0]?.input).toEqual({
      TableName: 'svc-fundraising-prod-Data',
      WarmThroughput: { ReadUnitsPerSecond: 75_000 },
      GlobalSecondaryIndexUpdates: [{ Update: { IndexName: 'gsi2', WarmThroughput: { WriteUnitsPerSecond: 22_500 } } }],
    });
    expect(calls[5]?.input).toMatchObject({
      DefaultRouteSettings: { ThrottlingRateLimit: 9_500, ThrottlingBurstLimit: 4_500 },
    });
    expect(text).toContain('note: payments already has 2,000 provisioned concurrency');
  });

  it('schedules its own reset at --until with EventBridge Scheduler, and a check a day later', async () => {
    const { calls } = await run(prewarm5000);
    const schedules = calls.flatMap((call) => (call.operation === 'CreateSchedule' ? [call.input] : []));
    const common = {
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
    };
    const role = TARGETS.schedules.roleArn;
    expect(schedules).toEqual([
      {
        ...common,
        Name: 'prewarm-reset-provisioned-concurrency',
        GroupName: 'svc-fundraising-prod-prewarm-reset',
        // --until 2026-12-05T23:00:00+01:00, in UTC.
        ScheduleExpression: 'at(2026-12-05T22:00:00)',
        Description: expect.stringContaining('--until 2026-12-05T22:00:00.000Z'),
        Target: {
          Arn: 'arn:aws:scheduler:::aws-sdk:lambda:deleteProvisionedConcurrencyConfig',
          RoleArn: role,
          Input: JSON.stringify({ FunctionName: ARN, Qualifier: 'live' }),
        },
      },
      {
        ...common,
        Name: 'prewarm-reset-throttle',
        GroupName: 'svc-fundraising-prod-prewarm-reset',
        ScheduleExpression: 'at(2026-12-05T22:00:00)',
        Description: expect.any(String),
        Target: {
          Arn: 'arn:aws:scheduler:::aws-sdk:apigatewayv2:updateStage',
          RoleArn: role,
          // Back to the configured throttle, the stage's other route settings as they were.
          Input: JSON.stringify({
            ApiId: 'a1b2c3',
            StageName: '$default',
            DefaultRouteSettings: {
              DetailedMetricsEnabled: false,
              ThrottlingRateLimit: STAGES.prod.throttle.rateLimit,
              ThrottlingBurstLimit: STAGES.prod.throttle.burstLimit,
            },
          }),
        },
      },
      {
        ...common,
        Name: 'prewarm-check-provisioned-concurrency',
        GroupName: 'svc-fundraising-prod-prewarm-check',
        ScheduleExpression: 'at(2026-12-06T22:00:00)',
        Description: expect.any(String),
        Target: {
          Arn: 'arn:aws:scheduler:::aws-sdk:lambda:deleteProvisionedConcurrencyConfig',
          RoleArn: role,
          Input: JSON.stringify({ FunctionName: ARN, Qualifier: 'live' }),
          // One call: its success alone means provisioned concurrency was still there.
          RetryPolicy: { MaximumRetryAttempts: 0 },
        },
      },
    ]);
  });

  it('prints the schedules in a dry run with the stack’s outputs by name', async () => {
    const { text } = await run({ ...prewarm5000, 'dry-run': true });
    expect(text).toContain(
      'would call Scheduler CreateSchedule {"Name":"prewarm-reset-provisioned-concurrency","GroupName":"<PrewarmResetScheduleGroup of svc-fundraising-prod>"',
    );
    expect(text).toContain('"RoleArn":"<PrewarmResetRoleArn of svc-fundraising-prod>"');
    expect(text).toContain("Input DefaultRouteSettings: the stage's configured throttle (its ApiThrottle output)");
  });

  it('makes no call at all when a quota refuses, and says which and what to raise', async () => {
    const aws = recordingAws(observed({ quotas: DEFAULT_QUOTAS }));
    await expect(runPrewarm(prewarm5000, () => undefined, aws.deps)).rejects.toThrow(
      /Refused, nothing changed:\n {2}- table needs 90,000 write units\/s.*Service Quotas/s,
    );
    expect(aws.calls).toEqual([]);
  });

  it('notes each provider and account whose rate limit is below the announced rate', async () => {
    const { text, calls } = await run(prewarm5000);
    expect(text).toContain(
      'note: provider rate limit below 5,000 donations/s: stripe 22/s per account; payments over it wait or pass to the next provider (limit_reached)',
    );
    expect(calls.length).toBeGreaterThan(0);
    const raised = await run(
      prewarm5000,
      observed({
        providerRateLimits: {
          limits: { stripe: { live: 6_000, accounts: { acct_small: { live: 100 } } }, adyen: { live: 8_000 } },
        },
      }),
    );
    expect(raised.text).toContain(
      'note: provider rate limit below 5,000 donations/s: stripe account acct_small 100/s;',
    );
    expect(raised.text).not.toContain('adyen');
  });

  it('refuses, calling nothing, when the provider rate limits together are below the announced rate', async () => {
    const aws = recordingAws(
      observed({
        providerRateLimits: {
          limits: { stripe: { live: 1_000, accounts: { acct_big: { live: 2_000 } } }, adyen: { live: 1_500 } },
        },
      }),
    );
    await expect(runPrewarm(prewarm5000, () => undefined, aws.deps)).rejects.toThrow(
      /Refused, nothing changed:\n {2}- the provider rate limits allow 4,500 live payments\/s in all, below 5,000 donations\/s/,
    );
    expect(aws.calls).toEqual([]);
  });

  it('reads the limits the payments alias applies: its SVC_PROVIDER_RATE_LIMITS with the secret’s override', async () => {
    const variables = {
      SVC_PROVIDER_RATE_LIMITS: JSON.stringify({ stripe: { live: 22, test: 20 } }),
      SVC_STRIPE_SECRET_ARN: 'arn:aws:secretsmanager:eu-central-2:123456789012:secret:StripeKeys',
    };
    const secretAsked: unknown[] = [];
    const secrets = {
      send: async (command: { input: unknown }) => {
        secretAsked.push(command.input);
        return {
          SecretString: JSON.stringify({
            live_secret_key: 'sk_live_x',
            provider_rate_limits: { stripe: { live: 90 } },
          }),
        };
      },
    } as never;
    expect(await deployedProviderLimits(secrets, variables)).toEqual({ limits: { stripe: { live: 90, test: 20 } } });
    expect(secretAsked).toEqual([{ SecretId: variables.SVC_STRIPE_SECRET_ARN }]);
    const denied = {
      send: async () => {
        throw Object.assign(new Error('no'), { name: 'AccessDeniedException' });
      },
    } as never;
    expect(await deployedProviderLimits(denied, variables)).toEqual({
      limits: { stripe: { live: 22, test: 20 } },
      note: 'the run-time provider rate limits could not be read (AccessDeniedException): checked against the deployed ones only',
    });
  });

  it('warns that one client is still held by the functions’ per-client limit', async () => {
    const { text } = await run(prewarm5000, observed({ clientRateLimit: '250/500' }));
    expect(text).toMatch(
      /note: each client is still limited to 250 requests\/s by the functions \(rateLimits\.client\)/,
    );
  });

  it('prints every call with its parameters and the cost in a dry run, and asks AWS nothing', async () => {
    const { created, text } = await run({ ...prewarm5000, 'dry-run': true });
    expect(created()).toBe(0);
    expect(text).toContain(
      'would call DynamoDB UpdateTable {"TableName":"<TableName of svc-fundraising-prod>","WarmThroughput":{"ReadUnitsPerSecond":75000,"WriteUnitsPerSecond":90000}',
    );
    expect(text).toContain(
      'would call Lambda PutProvisionedConcurrencyConfig {"FunctionName":"<PaymentsFunctionArn of svc-fundraising-prod>","Qualifier":"<PaymentsFunctionAlias of svc-fundraising-prod>","ProvisionedConcurrentExecutions":1125}',
    );
    expect(text).toContain('would call ApiGatewayV2 UpdateStage');
    expect(text).toMatch(/cost: DynamoDB warm throughput \(once; none after\): \$107\.25/);
    expect(text).toMatch(/cost: API Gateway throttle: \$0\.00/);
    // The default quotas are what a dry run knows: it says what a real run would refuse.
    expect(text).toMatch(/Would be refused:\n {2}- table needs 90,000 write units/);
  });

  it.each([
    [{ stage: 'local', 'donations-per-second': '10', until: UNTIL }, /Nothing to prewarm locally/],
    [{ 'donations-per-second': '10', until: UNTIL }, /Nothing to prewarm locally/],
    [{ ...prewarm5000, 'donations-per-second': '0' }, /--donations-per-second takes a whole number from 1 to 100,000/],
    [{ ...prewarm5000, 'donations-per-second': '-5' }, /whole number/],
    [{ ...prewarm5000, 'donations-per-second': 'lots' }, /whole number/],
    [{ ...prewarm5000, 'donations-per-second': '2.5' }, /whole number/],
    [{ ...prewarm5000, 'donations-per-second': '500000' }, /got 500000/],
    [{ stage: 'prod', until: UNTIL }, /got nothing/],
    [{ ...prewarm5000, until: '2026-12-05T11:00:00Z' }, /has passed/],
    [{ ...prewarm5000, until: 'saturday night' }, /--until takes an ISO time with its zone/],
    [{ ...prewarm5000, until: '2026-12-05T23:00:00' }, /with its zone/],
    [{ ...prewarm5000, until: '2026-12-32T23:00:00Z' }, /--until takes an ISO time/],
    [{ ...prewarm5000, until: '2026-11-31T23:00:00Z' }, /--until takes an ISO time/],
    [{ ...prewarm5000, until: '2027-12-05T23:00:00Z' }, /more than 7 days away/],
    [{ stage: 'prod', reset: true, until: UNTIL }, /--reset and --status take no/],
    [{ stage: 'prod', reset: true, status: true }, /--reset or --status, not both/],
    [{ stage: 'prod', status: true, 'dry-run': true }, /has no --dry-run/],
  ])('refuses %j before asking AWS anything', async (args, message) => {
    const aws = recordingAws(observed());
    await expect(runPrewarm(args, () => undefined, aws.deps)).rejects.toThrow(message);
    expect(aws.created()).toBe(0);
  });
});

describe('pnpm ops prewarm --reset', () => {
  it('deletes the scheduled reset and check, puts the configured throttle back, then deletes provisioned concurrency and the --until tag', async () => {
    const { calls, text } = await run(
      { stage: 'prod', reset: true },
      observed({
        provisioned: { requested: 1_125, allocated: 1_125, status: 'READY' },
        until: '2026-12-05T22:00:00.000Z',
        routeSettings: { DetailedMetricsEnabled: false, ThrottlingRateLimit: 9_000, ThrottlingBurstLimit: 4_500 },
      }),
    );
    expect(calls).toEqual([
      {
        service: 'Scheduler',
        operation: 'DeleteSchedule',
        input: { Name: 'prewarm-reset-provisioned-concurrency', GroupName: 'svc-fundraising-prod-prewarm-reset' },
      },
      {
        service: 'Scheduler',
        operation: 'DeleteSchedule',
        input: { Name: 'prewarm-reset-throttle', GroupName: 'svc-fundraising-prod-prewarm-reset' },
      },
      {
        service: 'Scheduler',
        operation: 'DeleteSchedule',
        input: { Name: 'prewarm-check-provisioned-concurrency', GroupName: 'svc-fundraising-prod-prewarm-check' },
      },
      {
        service: 'ApiGatewayV2',
        operation: 'UpdateStage',
        input: {
          ApiId: 'a1b2c3',
          StageName: '$default',
          DefaultRouteSettings: {
            DetailedMetricsEnabled: false,
            ThrottlingRateLimit: STAGES.prod.throttle.rateLimit,
            ThrottlingBurstLimit: STAGES.prod.throttle.burstLimit,
          },
        },
      },
      {
        service: 'Lambda',
        operation: 'DeleteProvisionedConcurrencyConfig',
        input: { FunctionName: ARN, Qualifier: 'live' },
      },
      { service: 'Lambda', operation: 'UntagResource', input: { Resource: ARN, TagKeys: ['svc:prewarm-until'] } },
    ]);
    expect(text).toContain('Warm throughput stays where it was raised: DynamoDB cannot lower it');
  });

  it('only resets the throttle where nothing else was prewarmed; a dry run calls nothing', async () => {
    expect((await run({ stage: 'prod', reset: true })).calls.map((call) => call.operation)).toEqual([
      'DeleteSchedule',
      'DeleteSchedule',
      'DeleteSchedule',
      'UpdateStage',
    ]);
    const dry = await run({ stage: 'prod', reset: true, 'dry-run': true });
    expect(dry.created()).toBe(0);
    expect(dry.text).toContain('would call Lambda DeleteProvisionedConcurrencyConfig');
    expect(dry.text).toContain("DefaultRouteSettings: the stage's configured throttle (its ApiThrottle output)");
  });
});

describe('pnpm ops prewarm --status', () => {
  const prewarmed = observed({
    warm: {
      table: { readUnitsPerSecond: 75_000, writeUnitsPerSecond: 90_000, status: 'UPDATING' },
      gsi1: cold(),
      gsi2: cold(),
      due: cold(),
    },
    provisioned: { requested: 1_125, allocated: 600, status: 'IN_PROGRESS' },
    until: '2026-12-05T22:00:00.000Z',
    routeSettings: { ThrottlingRateLimit: 9_000, ThrottlingBurstLimit: 4_500 },
  });

  it('prints the warm throughput, provisioned concurrency and throttle, with no warning before --until', async () => {
    const { lines, calls } = await run({ stage: 'prod', status: true }, prewarmed);
    expect(calls).toEqual([]);
    expect(lines).toEqual([
      `Stage prod (table svc-fundraising-prod-Data, ${ARN}:live, API a1b2c3):`,
      '  warm throughput table: 90,000 write, 75,000 read units/s (UPDATING)',
      '  warm throughput gsi1: 4,000 write, 12,000 read units/s (ACTIVE)',
      '  warm throughput gsi2: 4,000 write, 12,000 read units/s (ACTIVE)',
      '  warm throughput due: 4,000 write, 12,000 read units/s (ACTIVE)',
      '  provisioned concurrency: 1,125 requested, 600 allocated (IN_PROGRESS)',
      '  API throttle: 9,000/s, burst 4,500 (configured: 500/s, burst 1,000)',
      '  provider rate limits (payments, run-time override included): {"stripe":{"live":22,"test":20}}',
      '  prewarmed until 2026-12-05T22:00:00.000Z',
    ]);
  });

  it('warns once --until has passed while the stage is still prewarmed, with the command that resets it', () => {
    const after = new Date('2026-12-06T08:00:00Z');
    const lines = statusLines('prod', TARGETS, prewarmed, after);
    expect(lines.at(-2)).toBe('  prewarmed until 2026-12-05T22:00:00.000Z (passed)');
    expect(lines.at(-1)).toMatch(/^WARNING: the event ended at .* run pnpm ops prewarm --stage prod --reset$/);
    // Reset already: nothing billed, nothing to warn of.
    const reset = observed({ until: '2026-12-05T22:00:00.000Z' });
    expect(statusLines('prod', TARGETS, reset, after).some((line) => line.startsWith('WARNING'))).toBe(false);
    // Raised by hand, with no date to go by.
    const unrecorded = observed({ provisioned: { requested: 10, allocated: 10, status: 'READY' } });
    expect(statusLines('prod', TARGETS, unrecorded, NOW).at(-1)).toMatch(/^WARNING: raised with no --until recorded/);
  });
});
