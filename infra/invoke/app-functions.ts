import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import * as z from 'zod';
import { alarmsNotifyContext, captchaSiteKeyContext, STAGE_NAMES, type StageName } from '../config/stages';
import { REPO_ROOT } from '../constructs/repo-paths';
import { ServiceFunction } from '../constructs/service-function';
import { createServiceApp } from '../stacks/service-app';

/** What starts a function in AWS, read from the template; it decides the sample event. */
export type EventKind = 'api' | 'sqs' | 's3-via-sqs' | 'dynamodb-stream' | 'schedule' | 'custom-resource';

export interface AppFunction {
  /** The construct path, e.g. `svc-fundraising-dev/Billing/Worker`. */
  path: string;
  logicalId: string;
  /** The handler's source file, relative to the repository root. */
  entry: string;
  kind: EventKind;
  /** The function's variables as the template sets them: a string, or a reference to a resource. */
  environment: Record<string, unknown>;
  bundleTime: ServiceFunction['bundleTime'];
  tracerPlacement: ServiceFunction['tracerPlacement'];
  /** Seconds the function may run (the template's timeout). */
  timeoutSeconds: number;
  memoryMb: number;
  /** API functions: the route keys API Gateway sends them (`POST /payments`). */
  routes: string[];
  /** Scheduled functions: the target's input, as the template gives it (context attributes unresolved). */
  scheduleInput?: string;
  /** Stream functions: the event source's filter patterns. */
  filters: string[];
  /** S3-fed functions: the key prefix of the notifications. */
  keyPrefix?: string;
}

type Resource = { Type: string; Properties?: Record<string, unknown> };
type Resources = Record<string, Resource>;

/** `{"Fn::GetAtt": [id, attribute]}` or `{"Ref": id}`: the logical id referred to. */
function referredId(value: unknown): string | undefined {
  const ref = z.object({ Ref: z.string() }).safeParse(value);
  if (ref.success) return ref.data.Ref;
  const attribute = z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.string()]) }).safeParse(value);
  return attribute.success ? attribute.data['Fn::GetAtt'][0] : undefined;
}

const attributeOf = (value: unknown) =>
  z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.string()]) }).safeParse(value).data?.['Fn::GetAtt'][1];

/** What starts the function `id`, and the details its sample needs. */
function triggerOf(
  id: string,
  resources: Resources,
): Pick<AppFunction, 'kind' | 'routes' | 'scheduleInput' | 'filters' | 'keyPrefix'> | undefined {
  const all = Object.entries(resources);
  // The API invokes some functions through an alias (domain-function.ts, ALIASED_DOMAINS).
  const invokedAs = new Set([
    id,
    ...all
      .filter(([, r]) => r.Type === 'AWS::Lambda::Alias' && referredId(r.Properties?.FunctionName) === id)
      .map(([aliasId]) => aliasId),
  ]);
  const integrations = all
    .filter(
      ([, r]) =>
        r.Type === 'AWS::ApiGatewayV2::Integration' && invokedAs.has(referredId(r.Properties?.IntegrationUri) ?? ''),
    )
    .map(([integrationId]) => integrationId);
  if (integrations.length > 0) {
    const routes = all.flatMap(([, r]) => {
      if (r.Type !== 'AWS::ApiGatewayV2::Route') return [];
      const target = r.Properties?.Target;
      const joined = JSON.stringify(target ?? '');
      return integrations.some((integration) => joined.includes(`"${integration}"`))
        ? [String(r.Properties?.RouteKey)]
        : [];
    });
    return { kind: 'api', routes, filters: [] };
  }
  for (const [, r] of all) {
    if (r.Type === 'AWS::Scheduler::Schedule') {
      const target = r.Properties?.Target as { Arn?: unknown; Input?: string } | undefined;
      if (referredId(target?.Arn) === id)
        return { kind: 'schedule', routes: [], filters: [], scheduleInput: target?.Input };
    }
    if (r.Type === 'AWS::Lambda::EventSourceMapping' && referredId(r.Properties?.FunctionName) === id) {
      const source = r.Properties?.EventSourceArn;
      const filters = (
        (r.Properties?.FilterCriteria as { Filters?: Array<{ Pattern: string }> } | undefined)?.Filters ?? []
      ).map((filter) => filter.Pattern);
      if (attributeOf(source) === 'StreamArn') return { kind: 'dynamodb-stream', routes: [], filters };
      const queue = referredId(source);
      const notification = all.flatMap(([, bucket]) => {
        const configurations = (
          bucket.Properties?.NotificationConfiguration as
            | {
                QueueConfigurations?: Array<{
                  Queue: unknown;
                  Filter?: { S3Key?: { Rules?: Array<{ Name: string; Value: string }> } };
                }>;
              }
            | undefined
        )?.QueueConfigurations;
        return (configurations ?? []).filter((configuration) => referredId(configuration.Queue) === queue);
      })[0];
      if (notification) {
        const prefix = notification.Filter?.S3Key?.Rules?.find((rule) => rule.Name === 'prefix')?.Value;
        return { kind: 's3-via-sqs', routes: [], filters: [], ...(prefix ? { keyPrefix: prefix } : {}) };
      }
      return { kind: 'sqs', routes: [], filters };
    }
    if (r.Type === 'AWS::Lambda::Function') {
      const variables = (r.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
      if (referredId(variables?.USER_ON_EVENT_FUNCTION_ARN) === id)
        return { kind: 'custom-resource', routes: [], filters: [] };
    }
  }
  return undefined;
}

/**
 * Every function of the stage's CDK app that runs code of ours (the CDK's own custom-resource
 * providers left out), with what starts it, read from the synthesised template. Synthesised
 * without bundling (what `cdk synth --exclusively` does for stacks it skips): about 8 s.
 */
export function appFunctions(stage: StageName): AppFunction[] {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const outdir = mkdtempSync(join(tmpdir(), 'svc-invoke-'));
  const { app, stacks } = createServiceApp({
    context: {
      ...cdkJson.context,
      stage,
      // Synth without esbuild: the template is what we read; `pnpm invoke` bundles the one function it runs.
      'aws:cdk:bundling-stacks': [],
      // The stages that need site keys at synth get a stand-in: the template's other parts do not depend on it.
      [captchaSiteKeyContext(stage)]: 'invoke-local',
      [alarmsNotifyContext(stage)]: 'invoke-local@example.org',
    },
    outdir,
  });
  const [stack] = stacks;
  if (!stack) throw new Error(`No stack for stage ${stage}`);
  const template = app.synth().getStackByName(stack.stackName).template as { Resources: Resources };
  // The template is read: the assembly (templates, no bundles) is not needed any more.
  rmSync(outdir, { recursive: true, force: true });
  const functions = stack.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
  return functions.flatMap((fn) => {
    const cfn = fn.function.node.defaultChild as CfnFunction;
    const logicalId = Stack.of(fn).getLogicalId(cfn);
    const resource = template.Resources[logicalId];
    const trigger = triggerOf(logicalId, template.Resources);
    if (!resource) throw new Error(`${fn.node.path} is not in the template as ${logicalId}`);
    // A function of ours that nothing starts, or that a source this command does not know starts.
    if (!trigger)
      throw new Error(
        `${fn.node.path}: no trigger this command knows (API route, queue, stream, schedule, custom resource)`,
      );
    const properties = resource.Properties as {
      Environment?: { Variables?: Record<string, unknown> };
      Timeout?: number;
      MemorySize?: number;
    };
    return [
      {
        path: fn.node.path,
        logicalId,
        entry: fn.entry,
        bundleTime: fn.bundleTime,
        tracerPlacement: fn.tracerPlacement,
        environment: properties.Environment?.Variables ?? {},
        timeoutSeconds: properties.Timeout ?? 3,
        memoryMb: properties.MemorySize ?? 128,
        ...trigger,
      },
    ];
  });
}

/** The function named by its construct path (whole, or the part after the stack's name) or its logical id. */
export function findFunction(functions: AppFunction[], name: string): AppFunction {
  const found = functions.find(
    (fn) => fn.logicalId === name || fn.path === name || fn.path.split('/').slice(1).join('/') === name,
  );
  if (!found) {
    throw new Error(
      `No function ${JSON.stringify(name)} in the app; \`pnpm invoke --list\` shows them:\n  ${functions
        .map((fn) => fn.path.split('/').slice(1).join('/'))
        .join('\n  ')}`,
    );
  }
  return found;
}

export function isStage(value: string): value is StageName {
  return (STAGE_NAMES as readonly string[]).includes(value);
}
