import {
  ApiGatewayV2Client,
  GetStageCommand,
  type RouteSettings,
  UpdateStageCommand,
  type UpdateStageCommandInput,
} from '@aws-sdk/client-apigatewayv2';
import {
  DescribeLimitsCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
  type UpdateTableCommandInput,
  type WarmThroughput,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteProvisionedConcurrencyConfigCommand,
  type DeleteProvisionedConcurrencyConfigCommandInput,
  GetAccountSettingsCommand,
  GetFunctionConfigurationCommand,
  GetProvisionedConcurrencyConfigCommand,
  LambdaClient,
  ListTagsCommand,
  ProvisionedConcurrencyConfigNotFoundException,
  PutProvisionedConcurrencyConfigCommand,
  type PutProvisionedConcurrencyConfigCommandInput,
  TagResourceCommand,
  type TagResourceCommandInput,
  UntagResourceCommand,
  type UntagResourceCommandInput,
} from '@aws-sdk/client-lambda';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  type DeleteScheduleCommandInput,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DOMAINS, PREWARM_OUTPUTS, PREWARM_SCHEDULE_OUTPUTS, stackName, TABLE_NAME_OUTPUT } from '@svc/api';
import { nowDate } from '@svc/core';
import {
  DEFAULT_RATE_LIMITS,
  mergeRateLimits,
  type ProviderRateLimits,
  providerRateLimitsSchema,
  RUNTIME_LIMITS_KEY,
} from '@svc/payments/provider-rate-limits';
import { INDEXES, type IndexName } from '@svc/table';
import {
  AWS_DEFAULT_QUOTAS,
  type Capacity,
  type CostLine,
  capacityFor,
  costOf,
  DEFAULT_QUOTAS,
  format,
  LOAD_MODEL,
  type LoadModel,
  MAX_DONATIONS_PER_SECOND,
  type Quotas,
  type WarmUnits,
  withinQuotas,
} from './load-model';
import { outputsOfStage } from './target';

/**
 * `pnpm ops prewarm`: capacity for a known date (a telethon). It raises the table's and indexes'
 * warm throughput, puts provisioned concurrency on the payments function's `live` alias (what the
 * API invokes) and raises the API stage's throttle, for N donations a second (load-model.ts);
 * `--reset` takes the last two back, `--status` shows all three. docs/operations.md, "Prewarming
 * for a known date (telethon)", has the costs and the caveats.
 */

/** The Lambda tag that records until when the stage is prewarmed (`--status` warns after it). */
export const UNTIL_TAG = 'svc:prewarm-until';
/** Prewarm at most this long ahead: provisioned concurrency is billed from the moment it is put. */
export const MAX_DAYS_AHEAD = 7;
const RESOURCES = ['table', ...(Object.keys(INDEXES) as IndexName[])] as const;
type Resource = (typeof RESOURCES)[number];

/** Where the stage's parts are: its stack's outputs (infra/stacks/service-stack.ts). */
export interface Targets {
  table: string;
  functionArn: string;
  alias: string;
  apiId: string;
  apiStage: string;
  /** The stage's configured throttle (infra/config/stages.ts, as deployed); unknown in a dry run. */
  configuredThrottle: { rateLimit: number; burstLimit: number } | undefined;
  /** Where the reset at --until is scheduled, and the role Scheduler takes (infra/constructs/prewarm-alarms.ts). */
  schedules: { roleArn: string; resetGroup: string; checkGroup: string };
}

/** What the stage holds now. */
export interface Observed {
  warm: Record<Resource, WarmUnits & { status: string }>;
  quotas: Quotas;
  provisioned: { requested: number; allocated: number; status: string } | undefined;
  until: string | undefined;
  routeSettings: RouteSettings;
  /** The functions' per-client limit (`perSecond/burst`), which no throttle here lifts. */
  clientRateLimit: string | undefined;
  /**
   * The provider rate limits the payments alias applies: its SVC_PROVIDER_RATE_LIMITS (the stage
   * config as deployed) with the run-time override of the provider secret laid over it; `note`
   * says what could not be read.
   */
  providerRateLimits: { limits: ProviderRateLimits; note?: string | undefined };
}

export type AwsCall =
  | { service: 'DynamoDB'; operation: 'UpdateTable'; input: UpdateTableCommandInput }
  | {
      service: 'Lambda';
      operation: 'PutProvisionedConcurrencyConfig';
      input: PutProvisionedConcurrencyConfigCommandInput;
    }
  | {
      service: 'Lambda';
      operation: 'DeleteProvisionedConcurrencyConfig';
      input: DeleteProvisionedConcurrencyConfigCommandInput;
    }
  | { service: 'Lambda'; operation: 'TagResource'; input: TagResourceCommandInput }
  | { service: 'Lambda'; operation: 'UntagResource'; input: UntagResourceCommandInput }
  | { service: 'ApiGatewayV2'; operation: 'UpdateStage'; input: UpdateStageCommandInput }
  /** Created, or updated where a schedule of that name is left from an earlier prewarm. */
  | { service: 'Scheduler'; operation: 'CreateSchedule'; input: CreateScheduleCommandInput }
  /** Deleted where it exists (a schedule that ran deleted itself). */
  | { service: 'Scheduler'; operation: 'DeleteSchedule'; input: DeleteScheduleCommandInput };

/** What the command reads and changes in AWS; tests give a recording one. */
export interface PrewarmAws {
  targets(stage: string): Promise<Targets>;
  observe(targets: Targets): Promise<Observed>;
  apply(call: AwsCall): Promise<void>;
}

export interface PrewarmOptions {
  stage?: string | undefined;
  'donations-per-second'?: string | undefined;
  until?: string | undefined;
  reset?: boolean | undefined;
  status?: boolean | undefined;
  'dry-run'?: boolean | undefined;
}

export interface PrewarmDeps {
  aws: () => PrewarmAws;
  now: () => Date;
  /** The per-donation figures (default LOAD_MODEL: the measured ones). */
  model?: LoadModel;
}

export async function runPrewarm(
  options: PrewarmOptions,
  out: (line: string) => void,
  deps: PrewarmDeps = { aws: awsPrewarm, now: nowDate },
): Promise<void> {
  const stage = deployedStage(options.stage);
  const dryRun = options['dry-run'] ?? false;
  if (options.reset && options.status) throw new Error('Give --reset or --status, not both');
  if ((options.reset || options.status) && (options['donations-per-second'] || options.until)) {
    throw new Error('--reset and --status take no --donations-per-second or --until');
  }
  if (options.status) {
    if (dryRun) throw new Error('--status only reads: it has no --dry-run');
    const aws = deps.aws();
    const targets = await aws.targets(stage);
    for (const line of statusLines(stage, targets, await aws.observe(targets), deps.now())) out(line);
    return;
  }
  if (options.reset) {
    const aws = dryRun ? undefined : deps.aws();
    const { targets, observed } = aws ? await read(aws, stage) : assumed(stage);
    await carryOut(resetCalls(targets, observed), aws, out);
    out(
      'Warm throughput stays where it was raised: DynamoDB cannot lower it, and keeping it costs nothing (the charge was once).',
    );
    return;
  }
  const donationsPerSecond = parseDonationsPerSecond(options['donations-per-second']);
  const now = deps.now();
  const until = parseUntil(options.until, now);
  const aws = dryRun ? undefined : deps.aws();
  const { targets, observed } = aws ? await read(aws, stage) : assumed(stage);
  const plan = prewarmPlan({ targets, observed, donationsPerSecond, until, now, model: deps.model ?? LOAD_MODEL });
  out(`Prewarming stage ${stage} for ${format(donationsPerSecond)} donations/s until ${until.toISOString()}:`);
  for (const line of capacityLines(plan.capacity)) out(`  ${line}`);
  if (dryRun) out('  (dry run: no AWS call; assumed: warm throughput 0, no provisioned concurrency, default quotas)');
  for (const cost of plan.costs) out(`  cost: ${cost.what}: $${cost.dollars.toFixed(2)} (${cost.basis})`);
  for (const note of plan.notes) out(`  note: ${note}`);
  if (plan.refusals.length > 0) {
    const reasons = plan.refusals.map((refusal) => `  - ${refusal}`).join('\n');
    if (!dryRun) throw new Error(`Refused, nothing changed:\n${reasons}`);
    out(`Would be refused:\n${reasons}`);
  }
  await carryOut(plan.calls, aws, out);
  out('Warm throughput cannot be lowered again: --reset leaves it (no ongoing cost; the raise was charged once).');
  out(
    `The reset is scheduled at ${until.toISOString()} (EventBridge Scheduler: provisioned concurrency deleted, throttle back), checked a day later; to end earlier run: pnpm ops prewarm --stage ${stage} --reset`,
  );
}

/** A call to make, with what a dry run cannot fill in. */
export type PlannedCall = { call: AwsCall; note?: string };

export interface Plan {
  capacity: Capacity;
  calls: PlannedCall[];
  costs: CostLine[];
  refusals: string[];
  notes: string[];
}

/** The calls for N donations a second, each only raising what is below it. */
export function prewarmPlan(input: {
  targets: Targets;
  observed: Observed;
  donationsPerSecond: number;
  until: Date;
  now: Date;
  model: LoadModel;
}): Plan {
  const { targets, observed } = input;
  const held = withinQuotas(capacityFor(input.donationsPerSecond, input.model), observed.quotas);
  const capacity = held.capacity;
  const notes = [...held.notes];
  const calls: PlannedCall[] = [];

  // Warm throughput, table and indexes in one UpdateTable, as AWS's own example does:
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/update-warm-throughput.html
  // Each value only raised, never asked lower: "Once increased, warm throughput values can't be
  // decreased." https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
  const tableWarm = raise(observed.warm.table, capacity.warm.table);
  const indexUpdates = RESOURCES.flatMap((resource) => {
    if (resource === 'table') return [];
    const warm = raise(observed.warm[resource], capacity.warm[resource]);
    return warm ? [{ Update: { IndexName: INDEXES[resource].name, WarmThroughput: warm } }] : [];
  });
  if (tableWarm || indexUpdates.length > 0) {
    calls.push({
      call: {
        service: 'DynamoDB',
        operation: 'UpdateTable',
        input: {
          TableName: targets.table,
          ...(tableWarm ? { WarmThroughput: tableWarm } : {}),
          ...(indexUpdates.length > 0 ? { GlobalSecondaryIndexUpdates: indexUpdates } : {}),
        },
      },
    });
  } else {
    notes.push('the table and its indexes are already warm enough');
  }

  // The reset at --until is scheduled before anything billed by the hour is put: a prewarm whose
  // reset cannot be scheduled (no permission) changes nothing that costs on.
  calls.push(...resetSchedules(targets, observed, input.until));

  // Provisioned concurrency goes on the alias the API invokes: on $LATEST it is not allowed, and on
  // a version nobody calls it warms nothing.
  // https://docs.aws.amazon.com/lambda/latest/dg/provisioned-concurrency.html
  if ((observed.provisioned?.requested ?? 0) < capacity.provisionedConcurrency) {
    calls.push({
      call: {
        service: 'Lambda',
        operation: 'PutProvisionedConcurrencyConfig',
        input: {
          FunctionName: targets.functionArn,
          Qualifier: targets.alias,
          ProvisionedConcurrentExecutions: capacity.provisionedConcurrency,
        },
      },
    });
  } else {
    notes.push(`payments already has ${format(observed.provisioned?.requested ?? 0)} provisioned concurrency`);
  }
  calls.push({
    call: {
      service: 'Lambda',
      operation: 'TagResource',
      input: { Resource: targets.functionArn, Tags: { [UNTIL_TAG]: input.until.toISOString() } },
    },
  });

  // The stage's default route throttle; the stage's other route settings are kept as they are.
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html
  const rate = Math.max(observed.routeSettings.ThrottlingRateLimit ?? 0, capacity.api.rateLimit);
  const burst = Math.max(observed.routeSettings.ThrottlingBurstLimit ?? 0, capacity.api.burstLimit);
  calls.push({
    call: {
      service: 'ApiGatewayV2',
      operation: 'UpdateStage',
      input: {
        ApiId: targets.apiId,
        StageName: targets.apiStage,
        DefaultRouteSettings: { ...observed.routeSettings, ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst },
      },
    },
  });

  const providers = providerLimitCheck(observed.providerRateLimits, input.donationsPerSecond);
  notes.push(...providers.notes);

  const client = observed.clientRateLimit?.split('/')[0];
  if (client && Number(client) < capacity.api.rateLimit) {
    notes.push(
      `each client is still limited to ${client} requests/s by the functions (rateLimits.client): a form backend sending all donations as one client needs it raised and deployed before prewarming (docs/operations.md, "Rate limits")`,
    );
  }
  const hours = (input.until.getTime() - input.now.getTime()) / 3_600_000;
  return {
    capacity,
    calls,
    costs: costOf(capacity, observed.warm, DOMAINS.payments.memoryMb, hours),
    refusals: [...held.refusals, ...providers.refusals],
    notes,
  };
}

/**
 * The provider rate limits against the announced rate (issue 46, point 2). Each donation is one
 * new payment, one counted provider request (`POST /v1/payment_intents` at Stripe), so N
 * donations a second need N live requests a second across the providers the profiles route to.
 * The command cannot see which providers the organisations' profiles use (that is in the table),
 * so it refuses only when all the limits together are below N (no routing can carry the rate),
 * and notes each provider or account below N (payments over it wait a second or go to the next
 * provider, `limit_reached`). A provider without a live limit (Adyen unless one is configured) is
 * not held by the limiter: only by the provider's own answers.
 */
export function providerLimitCheck(
  observed: Observed['providerRateLimits'],
  donationsPerSecond: number,
): { refusals: string[]; notes: string[] } {
  const notes: string[] = observed.note ? [observed.note] : [];
  const real = ['stripe', 'adyen'];
  let total = 0;
  let unlimited = false;
  for (const provider of real) {
    const entry = observed.limits[provider];
    if (entry?.live === undefined) {
      unlimited = true;
      continue;
    }
    total += entry.live;
    const below = [
      ...(entry.live < donationsPerSecond ? [`${provider} ${format(entry.live)}/s per account`] : []),
      ...Object.entries(entry.accounts ?? {}).flatMap(([account, modes]) => {
        if (modes.live === undefined) return [];
        total += modes.live;
        return modes.live < donationsPerSecond ? [`${provider} account ${account} ${format(modes.live)}/s`] : [];
      }),
    ];
    if (below.length > 0) {
      notes.push(
        `provider rate limit below ${format(donationsPerSecond)} donations/s: ${below.join(', ')}; payments over it wait or pass to the next provider (limit_reached). Raise it with the provider first, then pnpm ops providers:limits (docs/operations.md, "Provider rate limits")`,
      );
    }
  }
  const refusals =
    !unlimited && total < donationsPerSecond
      ? [
          `the provider rate limits allow ${format(total)} live payments/s in all, below ${format(donationsPerSecond)} donations/s: raise them with the providers, then pnpm ops providers:limits --stage <stage> --set '<json>' (docs/operations.md, "Provider rate limits")`,
        ]
      : [];
  return { refusals, notes };
}

/** The names of the schedules a prewarm leaves: the reset's two calls at --until, the check a day later. */
export const RESET_SCHEDULES = {
  capacity: 'prewarm-reset-provisioned-concurrency',
  throttle: 'prewarm-reset-throttle',
  check: 'prewarm-check-provisioned-concurrency',
} as const;
/** The check runs this long after --until. */
export const CHECK_AFTER_MS = 86_400_000;

/**
 * EventBridge Scheduler one-time schedules for the reset (issue 46, point 5), with universal
 * targets: Scheduler itself calls `arn:aws:scheduler:::aws-sdk:<service>:<apiAction>` with the
 * JSON Input as the request and the stack's PrewarmResetRole
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-universal.html). A
 * one-time schedule is `at(yyyy-mm-ddThh:mm:ss)` in ScheduleExpressionTimezone, and
 * ActionAfterCompletion DELETE removes it once it has run
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html,
 * https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html).
 *
 * - At --until: DeleteProvisionedConcurrencyConfig on the alias (what is billed), and UpdateStage
 *   back to the configured throttle. Warm throughput costs nothing while it stays and cannot be
 *   lowered; the --until tag stays as the record (`--status` warns only while something is raised).
 * - A day after: DeleteProvisionedConcurrencyConfig again, with no retry. Normally there is
 *   nothing to delete and the call fails; one that succeeds found provisioned concurrency still
 *   set, and the PrewarmStillProvisioned alarm (attempts less target errors) fires.
 */
export function resetSchedules(targets: Targets, observed: Observed, until: Date): PlannedCall[] {
  const at = (time: Date) => `at(${time.toISOString().slice(0, 19)})`;
  const schedule = (
    name: string,
    group: string,
    time: Date,
    action: string,
    input: unknown,
    retries?: number,
  ): CreateScheduleCommandInput => ({
    Name: name,
    GroupName: group,
    ScheduleExpression: at(time),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    Description: `pnpm ops prewarm: ${name} (--until ${until.toISOString()})`,
    Target: {
      // Universal targets name no partition (the format above); Scheduler calls the API in the
      // schedule's own Region and partition.
      Arn: `arn:aws:scheduler:::aws-sdk:${action}`,
      RoleArn: targets.schedules.roleArn,
      Input: JSON.stringify(input),
      ...(retries === undefined ? {} : { RetryPolicy: { MaximumRetryAttempts: retries } }),
    },
  });
  const alias = { FunctionName: targets.functionArn, Qualifier: targets.alias };
  const throttle = throttleReset(targets, observed);
  return [
    {
      call: {
        service: 'Scheduler',
        operation: 'CreateSchedule',
        input: schedule(
          RESET_SCHEDULES.capacity,
          targets.schedules.resetGroup,
          until,
          'lambda:deleteProvisionedConcurrencyConfig',
          alias,
        ),
      },
    },
    {
      call: {
        service: 'Scheduler',
        operation: 'CreateSchedule',
        input: schedule(
          RESET_SCHEDULES.throttle,
          targets.schedules.resetGroup,
          until,
          'apigatewayv2:updateStage',
          throttle.call.input,
        ),
      },
      ...(throttle.note ? { note: `Input ${throttle.note}` } : {}),
    },
    {
      call: {
        service: 'Scheduler',
        operation: 'CreateSchedule',
        input: schedule(
          RESET_SCHEDULES.check,
          targets.schedules.checkGroup,
          new Date(until.getTime() + CHECK_AFTER_MS),
          'lambda:deleteProvisionedConcurrencyConfig',
          alias,
          0,
        ),
      },
    },
  ];
}

/** The stage's throttle back to its configured values, its other route settings kept. */
function throttleReset(targets: Targets, observed: Observed): PlannedCall & { call: { operation: 'UpdateStage' } } {
  const configured = targets.configuredThrottle;
  return {
    call: {
      service: 'ApiGatewayV2',
      operation: 'UpdateStage',
      input: {
        ApiId: targets.apiId,
        StageName: targets.apiStage,
        ...(configured
          ? {
              DefaultRouteSettings: {
                ...observed.routeSettings,
                ThrottlingRateLimit: configured.rateLimit,
                ThrottlingBurstLimit: configured.burstLimit,
              },
            }
          : {}),
      },
    },
    ...(configured ? {} : { note: "DefaultRouteSettings: the stage's configured throttle (its ApiThrottle output)" }),
  };
}

/**
 * Back to the stage's configured throttle, no provisioned concurrency; warm throughput stays. The
 * schedules an earlier prewarm left go first (a reset by hand must not be followed by another).
 */
export function resetCalls(targets: Targets, observed: Observed): PlannedCall[] {
  const calls: PlannedCall[] = [
    ...(
      [
        [RESET_SCHEDULES.capacity, targets.schedules.resetGroup],
        [RESET_SCHEDULES.throttle, targets.schedules.resetGroup],
        [RESET_SCHEDULES.check, targets.schedules.checkGroup],
      ] as const
    ).map(
      ([Name, GroupName]): PlannedCall => ({
        call: { service: 'Scheduler', operation: 'DeleteSchedule', input: { Name, GroupName } },
      }),
    ),
  ];
  calls.push(throttleReset(targets, observed));
  if (observed.provisioned) {
    calls.push({
      call: {
        service: 'Lambda',
        operation: 'DeleteProvisionedConcurrencyConfig',
        input: { FunctionName: targets.functionArn, Qualifier: targets.alias },
      },
    });
  }
  if (observed.until) {
    calls.push({
      call: {
        service: 'Lambda',
        operation: 'UntagResource',
        input: { Resource: targets.functionArn, TagKeys: [UNTIL_TAG] },
      },
    });
  }
  return calls;
}

/** What `--status` prints, with a warning once the recorded date has passed. */
export function statusLines(stage: string, targets: Targets, observed: Observed, now: Date): string[] {
  const lines = [
    `Stage ${stage} (table ${targets.table}, ${targets.functionArn}:${targets.alias}, API ${targets.apiId}):`,
  ];
  for (const resource of RESOURCES) {
    const warm = observed.warm[resource];
    lines.push(
      `  warm throughput ${resource}: ${format(warm.writeUnitsPerSecond)} write, ${format(warm.readUnitsPerSecond)} read units/s (${warm.status})`,
    );
  }
  const provisioned = observed.provisioned;
  lines.push(
    provisioned
      ? `  provisioned concurrency: ${format(provisioned.requested)} requested, ${format(provisioned.allocated)} allocated (${provisioned.status})`
      : '  provisioned concurrency: none',
  );
  const configured = targets.configuredThrottle;
  lines.push(
    `  API throttle: ${format(observed.routeSettings.ThrottlingRateLimit ?? 0)}/s, burst ${format(observed.routeSettings.ThrottlingBurstLimit ?? 0)}` +
      (configured ? ` (configured: ${format(configured.rateLimit)}/s, burst ${format(configured.burstLimit)})` : ''),
  );
  lines.push(
    `  provider rate limits (payments, run-time override included): ${JSON.stringify(observed.providerRateLimits.limits)}`,
  );
  if (observed.providerRateLimits.note) lines.push(`  note: ${observed.providerRateLimits.note}`);
  const raised =
    provisioned !== undefined ||
    (configured !== undefined && (observed.routeSettings.ThrottlingRateLimit ?? 0) > configured.rateLimit);
  if (observed.until) {
    const passed = Date.parse(observed.until) <= now.getTime();
    lines.push(`  prewarmed until ${observed.until}${passed ? ' (passed)' : ''}`);
    if (passed && raised) {
      lines.push(
        `WARNING: the event ended at ${observed.until} and the stage is still prewarmed (provisioned concurrency is billed until it goes): run pnpm ops prewarm --stage ${stage} --reset`,
      );
    }
  } else if (raised) {
    lines.push(
      `WARNING: raised with no --until recorded: when the event is over, run pnpm ops prewarm --stage ${stage} --reset`,
    );
  }
  return lines;
}

function capacityLines(capacity: Capacity): string[] {
  return [
    ...RESOURCES.map(
      (resource) =>
        `warm throughput ${resource}: ${format(capacity.warm[resource].writeUnitsPerSecond)} write, ${format(capacity.warm[resource].readUnitsPerSecond)} read units/s`,
    ),
    `payments provisioned concurrency: ${format(capacity.provisionedConcurrency)}`,
    `API throttle: ${format(capacity.api.rateLimit)} requests/s, burst ${format(capacity.api.burstLimit)}`,
  ];
}

/** Makes the calls in order, each printed first; without AWS (a dry run) only prints them. */
async function carryOut(calls: PlannedCall[], aws: PrewarmAws | undefined, out: (line: string) => void) {
  for (const { call, note } of calls) {
    out(`${aws ? 'calling' : 'would call'} ${call.service} ${call.operation} ${JSON.stringify(call.input)}`);
    if (note) out(`  ${note}`);
    await aws?.apply(call);
  }
}

/** Only the units below what is needed, so a request never asks for less than the table has. */
function raise(current: WarmUnits, needed: WarmUnits): WarmThroughput | undefined {
  const warm: WarmThroughput = {
    ...(needed.readUnitsPerSecond > current.readUnitsPerSecond
      ? { ReadUnitsPerSecond: needed.readUnitsPerSecond }
      : {}),
    ...(needed.writeUnitsPerSecond > current.writeUnitsPerSecond
      ? { WriteUnitsPerSecond: needed.writeUnitsPerSecond }
      : {}),
  };
  return Object.keys(warm).length > 0 ? warm : undefined;
}

async function read(aws: PrewarmAws, stage: string): Promise<{ targets: Targets; observed: Observed }> {
  const targets = await aws.targets(stage);
  return { targets, observed: await aws.observe(targets) };
}

/** A dry run's stand-in for what only AWS knows: the outputs by name, nothing warm, default quotas. */
function assumed(stage: string): { targets: Targets; observed: Observed } {
  const output = (key: string) => `<${key} of ${stackName(stage)}>`;
  const cold = { readUnitsPerSecond: 0, writeUnitsPerSecond: 0, status: 'unknown' };
  return {
    targets: {
      table: output(TABLE_NAME_OUTPUT),
      functionArn: output(PREWARM_OUTPUTS.paymentsFunction),
      alias: output(PREWARM_OUTPUTS.paymentsAlias),
      apiId: output(PREWARM_OUTPUTS.apiId),
      apiStage: output(PREWARM_OUTPUTS.apiStage),
      configuredThrottle: undefined,
      schedules: {
        roleArn: output(PREWARM_SCHEDULE_OUTPUTS.role),
        resetGroup: output(PREWARM_SCHEDULE_OUTPUTS.resetGroup),
        checkGroup: output(PREWARM_SCHEDULE_OUTPUTS.checkGroup),
      },
    },
    observed: {
      warm: Object.fromEntries(RESOURCES.map((resource) => [resource, cold])) as Observed['warm'],
      // For --reset: as if there were provisioned concurrency and a tag to take away.
      quotas: DEFAULT_QUOTAS,
      provisioned: { requested: 0, allocated: 0, status: 'unknown' },
      until: 'unknown',
      routeSettings: {},
      clientRateLimit: undefined,
      providerRateLimits: {
        limits: DEFAULT_RATE_LIMITS,
        note: "provider rate limits assumed to be the defaults (a dry run reads neither the alias's nor the secret's)",
      },
    },
  };
}

function deployedStage(stage: string | undefined): string {
  if (!stage || stage === 'local') {
    throw new Error(
      'Nothing to prewarm locally: DynamoDB Local has no warm throughput, the local gateway no throttle, and the handlers run in its process (no provisioned concurrency). Give --stage <deployed stage>.',
    );
  }
  return stage;
}

export function parseDonationsPerSecond(text: string | undefined): number {
  const value = Number(text);
  if (!text || !/^\d+$/.test(text) || value < 1 || value > MAX_DONATIONS_PER_SECOND) {
    throw new Error(
      `--donations-per-second takes a whole number from 1 to ${format(MAX_DONATIONS_PER_SECOND)} (got ${text ?? 'nothing'})`,
    );
  }
  return value;
}

/** An ISO time with its zone (no guessing whose midnight), after now and within MAX_DAYS_AHEAD. */
export function parseUntil(text: string | undefined, now: Date): Date {
  const iso = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
  const [, year, month, day] = (text && iso.exec(text)) || [];
  // Date rolls 31 November over into December: the day must be one of its month's.
  const realDay = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).getUTCDate() === Number(day);
  const at = text && realDay ? new Date(text) : undefined;
  if (!at || Number.isNaN(at.getTime())) {
    throw new Error(
      `--until takes an ISO time with its zone, e.g. 2026-12-05T23:00:00+01:00 (got ${text ?? 'nothing'})`,
    );
  }
  if (at.getTime() <= now.getTime()) throw new Error(`--until ${text} has passed: the event must still be ahead`);
  if (at.getTime() - now.getTime() > MAX_DAYS_AHEAD * 86_400_000) {
    throw new Error(
      `--until ${text} is more than ${MAX_DAYS_AHEAD} days away: prewarm shortly before the event (provisioned concurrency is billed from the moment it is put)`,
    );
  }
  return at;
}

/** The stage in AWS: its stack's outputs, then the SDK clients (credentials from the usual chain). */
export function awsPrewarm(): PrewarmAws {
  const dynamodb = new DynamoDBClient({});
  const lambda = new LambdaClient({});
  const apiGateway = new ApiGatewayV2Client({});
  const scheduler = new SchedulerClient({});
  const secrets = new SecretsManagerClient({});
  return {
    async targets(stage) {
      const outputs = await outputsOfStage(stage);
      const output = (key: string) => {
        const value = outputs.get(key);
        if (!value) throw new Error(`Stack ${stackName(stage)} has no ${key} output: deploy the stage first`);
        return value;
      };
      const [rateLimit, burstLimit] = output(PREWARM_OUTPUTS.apiThrottle).split('/').map(Number);
      if (!Number.isFinite(rateLimit) || !Number.isFinite(burstLimit)) {
        throw new Error(`${PREWARM_OUTPUTS.apiThrottle} output is not rate/burst`);
      }
      return {
        table: output(TABLE_NAME_OUTPUT),
        functionArn: output(PREWARM_OUTPUTS.paymentsFunction),
        alias: output(PREWARM_OUTPUTS.paymentsAlias),
        apiId: output(PREWARM_OUTPUTS.apiId),
        apiStage: output(PREWARM_OUTPUTS.apiStage),
        configuredThrottle: { rateLimit: rateLimit ?? 0, burstLimit: burstLimit ?? 0 },
        schedules: {
          roleArn: output(PREWARM_SCHEDULE_OUTPUTS.role),
          resetGroup: output(PREWARM_SCHEDULE_OUTPUTS.resetGroup),
          checkGroup: output(PREWARM_SCHEDULE_OUTPUTS.checkGroup),
        },
      };
    },
    async observe(targets) {
      const [table, limits, account, provisioned, tags, stage, configuration] = await Promise.all([
        dynamodb.send(new DescribeTableCommand({ TableName: targets.table })),
        dynamodb.send(new DescribeLimitsCommand({})),
        lambda.send(new GetAccountSettingsCommand({})),
        lambda
          .send(
            new GetProvisionedConcurrencyConfigCommand({ FunctionName: targets.functionArn, Qualifier: targets.alias }),
          )
          .catch((error: unknown) => {
            if (error instanceof ProvisionedConcurrencyConfigNotFoundException) return undefined;
            throw error;
          }),
        lambda.send(new ListTagsCommand({ Resource: targets.functionArn })),
        apiGateway.send(new GetStageCommand({ ApiId: targets.apiId, StageName: targets.apiStage })),
        lambda.send(
          new GetFunctionConfigurationCommand({ FunctionName: targets.functionArn, Qualifier: targets.alias }),
        ),
      ]);
      const description = table.Table;
      if (!description) throw new Error(`DescribeTable returned no table ${targets.table}`);
      const warmOf = (
        warm: { ReadUnitsPerSecond?: number; WriteUnitsPerSecond?: number; Status?: string } | undefined,
      ) => ({
        readUnitsPerSecond: warm?.ReadUnitsPerSecond ?? 0,
        writeUnitsPerSecond: warm?.WriteUnitsPerSecond ?? 0,
        status: warm?.Status ?? 'unknown',
      });
      const indexes = description.GlobalSecondaryIndexes ?? [];
      const warm = Object.fromEntries(
        RESOURCES.map((resource) => {
          if (resource === 'table') return [resource, warmOf(description.WarmThroughput)];
          const index = indexes.find((candidate) => candidate.IndexName === INDEXES[resource].name);
          if (!index) throw new Error(`Table ${targets.table} has no index ${INDEXES[resource].name}`);
          return [resource, warmOf(index.WarmThroughput)];
        }),
      ) as Observed['warm'];
      const requested = provisioned?.RequestedProvisionedConcurrentExecutions;
      // Provisioned concurrency comes out of the unreserved pool, of which 100 always stay unreserved;
      // what this alias holds already is counted as its own.
      // https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
      const unreserved = account.AccountLimit?.UnreservedConcurrentExecutions ?? AWS_DEFAULT_QUOTAS.accountConcurrency;
      return {
        warm,
        quotas: {
          tableReadUnits: limits.TableMaxReadCapacityUnits ?? AWS_DEFAULT_QUOTAS.tableReadUnits,
          tableWriteUnits: limits.TableMaxWriteCapacityUnits ?? AWS_DEFAULT_QUOTAS.tableWriteUnits,
          provisionableConcurrency: unreserved - AWS_DEFAULT_QUOTAS.unreservedMinimum + (requested ?? 0),
          apiRate: AWS_DEFAULT_QUOTAS.apiRate,
          apiBurst: AWS_DEFAULT_QUOTAS.apiBurst,
        },
        provisioned:
          requested === undefined
            ? undefined
            : {
                requested,
                allocated: provisioned?.AllocatedProvisionedConcurrentExecutions ?? 0,
                status: provisioned?.Status ?? 'unknown',
              },
        until: tags.Tags?.[UNTIL_TAG],
        routeSettings: stage.DefaultRouteSettings ?? {},
        clientRateLimit: configuration.Environment?.Variables?.SVC_CLIENT_RATE_LIMIT,
        providerRateLimits: await deployedProviderLimits(secrets, configuration.Environment?.Variables ?? {}),
      };
    },
    async apply(call) {
      switch (call.operation) {
        case 'UpdateTable':
          // UpdateTable is refused while the table is UPDATING.
          // https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html
          await untilTableActive(dynamodb, call.input.TableName ?? '');
          await dynamodb.send(new UpdateTableCommand(call.input));
          return;
        case 'PutProvisionedConcurrencyConfig':
          await lambda.send(new PutProvisionedConcurrencyConfigCommand(call.input));
          return;
        case 'DeleteProvisionedConcurrencyConfig':
          await lambda.send(new DeleteProvisionedConcurrencyConfigCommand(call.input));
          return;
        case 'TagResource':
          await lambda.send(new TagResourceCommand(call.input));
          return;
        case 'UntagResource':
          await lambda.send(new UntagResourceCommand(call.input));
          return;
        case 'UpdateStage':
          await apiGateway.send(new UpdateStageCommand(call.input));
          return;
        case 'CreateSchedule':
          // A schedule of that name left by an earlier prewarm (its --until not reached yet) is
          // replaced: UpdateSchedule takes the whole definition, as CreateSchedule does.
          // https://docs.aws.amazon.com/scheduler/latest/APIReference/API_UpdateSchedule.html
          await scheduler.send(new CreateScheduleCommand(call.input)).catch(async (error: unknown) => {
            if (!(error instanceof ConflictException)) throw error;
            await scheduler.send(new UpdateScheduleCommand(call.input));
          });
          return;
        case 'DeleteSchedule':
          await scheduler.send(new DeleteScheduleCommand(call.input)).catch((error: unknown) => {
            if (!(error instanceof ResourceNotFoundException)) throw error;
          });
          return;
      }
    },
  };
}

/**
 * What the payments alias applies: its SVC_PROVIDER_RATE_LIMITS, with the override of the secret
 * its SVC_STRIPE_SECRET_ARN names (secretsmanager:GetSecretValue; only that key is kept).
 */
export async function deployedProviderLimits(
  secrets: Pick<SecretsManagerClient, 'send'>,
  variables: Record<string, string>,
): Promise<Observed['providerRateLimits']> {
  const configured = variables.SVC_PROVIDER_RATE_LIMITS
    ? providerRateLimitsSchema.parse(JSON.parse(variables.SVC_PROVIDER_RATE_LIMITS))
    : DEFAULT_RATE_LIMITS;
  const secretId = variables.SVC_STRIPE_SECRET_ARN;
  if (!secretId) return { limits: configured };
  try {
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
    const override = (JSON.parse(out.SecretString ?? '{}') as Record<string, unknown>)[RUNTIME_LIMITS_KEY];
    return {
      limits: mergeRateLimits(
        configured,
        override === undefined ? undefined : providerRateLimitsSchema.parse(override),
      ),
    };
  } catch (error) {
    return {
      limits: configured,
      note: `the run-time provider rate limits could not be read (${(error as Error).name}): checked against the deployed ones only`,
    };
  }
}

async function untilTableActive(dynamodb: DynamoDBClient, table: string): Promise<void> {
  for (let attempt = 0; attempt < 90; attempt++) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  throw new Error(`Table ${table} did not become ACTIVE within 15 minutes: nothing changed; run the command again`);
}
