import type { Template } from 'aws-cdk-lib/assertions';
import * as z from 'zod';

/**
 * Typed views of the few resource shapes the tests inspect. The synthesized template is parsed,
 * not cast, so a shape change fails loudly here instead of passing vacuously.
 */
const ref = z.object({ Ref: z.string() });
const getAttArn = z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.literal('Arn')]) });

const functionSchema = z.object({
  Properties: z.object({
    Role: getAttArn,
    Runtime: z.string(),
    Architectures: z.array(z.string()),
    MemorySize: z.number(),
    Timeout: z.number().optional(),
    Environment: z.object({ Variables: z.record(z.string(), z.unknown()) }),
    LoggingConfig: z.object({ LogGroup: ref }).optional(),
    DeadLetterConfig: z.object({ TargetArn: getAttArn }).optional(),
  }),
});

const statementSchema = z.object({
  Effect: z.string(),
  Action: z.union([z.string(), z.array(z.string())]).transform((action) => (Array.isArray(action) ? action : [action])),
  Resource: z.unknown(),
  Condition: z.unknown().optional(),
});

const policySchema = z.object({
  Properties: z.object({
    Roles: z.array(ref),
    PolicyDocument: z.object({ Statement: z.array(statementSchema) }),
  }),
});

const roleSchema = z.object({
  Properties: z.object({ ManagedPolicyArns: z.array(z.unknown()).optional() }),
});

const routeSchema = z.object({
  Properties: z.object({
    RouteKey: z.string(),
    Target: z.object({ 'Fn::Join': z.tuple([z.literal(''), z.tuple([z.literal('integrations/'), ref])]) }),
    AuthorizationType: z.string().optional(),
  }),
});

const integrationSchema = z.object({
  // The function's ARN, or an alias's (`Ref` of an AWS::Lambda::Alias: domain-function.ts, ALIASED_DOMAINS).
  Properties: z.object({ IntegrationType: z.string(), IntegrationUri: z.union([getAttArn, ref]) }),
});

const getAttVersion = z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.literal('Version')]) });

const aliasSchema = z.object({
  Properties: z.object({ FunctionName: ref, FunctionVersion: getAttVersion, Name: z.string() }),
});

export type Statement = z.infer<typeof statementSchema>;

export interface DomainFunctionView {
  logicalId: string;
  roleId: string;
  properties: z.infer<typeof functionSchema>['Properties'];
}

function resourcesOf<S extends z.ZodType>(template: Template, type: string, schema: S): Map<string, z.infer<S>> {
  const found = template.findResources(type);
  return new Map(Object.entries(found).map(([id, resource]) => [id, schema.parse(resource)]));
}

const serviceNameSchema = z.object({
  Properties: z.object({ Environment: z.object({ Variables: z.object({ POWERTOOLS_SERVICE_NAME: z.string() }) }) }),
});

/** Our functions (not CDK's provider framework), keyed by POWERTOOLS_SERVICE_NAME: the domain or the bootstrap. */
export function functionsByService(template: Template): Map<string, DomainFunctionView> {
  const byService = new Map<string, DomainFunctionView>();
  for (const [logicalId, resource] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
    const named = serviceNameSchema.safeParse(resource);
    if (!named.success) continue;
    const { Properties: properties } = functionSchema.parse(resource);
    byService.set(named.data.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME, {
      logicalId,
      roleId: properties.Role['Fn::GetAtt'][0],
      properties,
    });
  }
  return byService;
}

/** All statements of the inline policies attached to a role. */
export function statementsOfRole(template: Template, roleId: string): Statement[] {
  return [...resourcesOf(template, 'AWS::IAM::Policy', policySchema).values()]
    .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

export function managedPoliciesOfRole(template: Template, roleId: string): unknown[] {
  const role = resourcesOf(template, 'AWS::IAM::Role', roleSchema).get(roleId);
  if (!role) throw new Error(`No role ${roleId}`);
  return role.Properties.ManagedPolicyArns ?? [];
}

/** Roles whose policies allow any of `actions` on a resource referenced by `resourceId`. */
export function rolesAllowedOn(template: Template, resourceId: string, actions: readonly string[]): Set<string> {
  const roles = new Set<string>();
  for (const policy of resourcesOf(template, 'AWS::IAM::Policy', policySchema).values()) {
    const allows = policy.Properties.PolicyDocument.Statement.some(
      (statement) =>
        statement.Effect === 'Allow' &&
        statement.Action.some((action) => actions.includes(action)) &&
        JSON.stringify(statement.Resource).includes(`"${resourceId}"`),
    );
    if (allows) for (const role of policy.Properties.Roles) roles.add(role.Ref);
  }
  return roles;
}

export function routes(template: Template) {
  return [...resourcesOf(template, 'AWS::ApiGatewayV2::Route', routeSchema).values()].map((route) => ({
    routeKey: route.Properties.RouteKey,
    integrationId: route.Properties.Target['Fn::Join'][1][1].Ref,
    authorizationType: route.Properties.AuthorizationType,
  }));
}

/** The Lambda function (logical id) behind each integration, through its alias where the API invokes one. */
export function integrationTargets(template: Template): Map<string, string> {
  const integrations = resourcesOf(template, 'AWS::ApiGatewayV2::Integration', integrationSchema);
  const aliases = lambdaAliases(template);
  return new Map(
    [...integrations].map(([id, integration]) => {
      const uri = integration.Properties.IntegrationUri;
      const target = 'Ref' in uri ? uri.Ref : uri['Fn::GetAtt'][0];
      return [id, aliases.get(target)?.functionId ?? target];
    }),
  );
}

/** The logical id each integration invokes as it is: a function's or an alias's. */
export function integrationUris(template: Template): Map<string, string> {
  const integrations = resourcesOf(template, 'AWS::ApiGatewayV2::Integration', integrationSchema);
  return new Map(
    [...integrations].map(([id, integration]) => {
      const uri = integration.Properties.IntegrationUri;
      return [id, 'Ref' in uri ? uri.Ref : uri['Fn::GetAtt'][0]];
    }),
  );
}

/** Lambda aliases by logical id: their name, function and the version (logical id) they point to. */
export function lambdaAliases(template: Template) {
  return new Map(
    [...resourcesOf(template, 'AWS::Lambda::Alias', aliasSchema)].map(([id, alias]) => [
      id,
      {
        name: alias.Properties.Name,
        functionId: alias.Properties.FunctionName.Ref,
        versionId: alias.Properties.FunctionVersion['Fn::GetAtt'][0],
      },
    ]),
  );
}

export function logicalIdOf(template: Template, type: string): string {
  const ids = Object.keys(template.findResources(type));
  if (ids.length !== 1 || !ids[0]) throw new Error(`Expected exactly one ${type}, found ${ids.length}`);
  return ids[0];
}

/** The one resource of a type whose logical id starts with `prefix` (ids are path-derived). */
export function logicalIdStartingWith(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1 || !ids[0])
    throw new Error(`Expected exactly one ${type} named ${prefix}…, found ${ids.length}`);
  return ids[0];
}

const inlinePoliciesSchema = z.object({
  Properties: z.object({
    Policies: z
      .array(z.object({ PolicyName: z.string(), PolicyDocument: z.object({ Statement: z.array(statementSchema) }) }))
      .optional(),
  }),
});

/** Statements of the policies written into the role resource itself (`inlinePolicies`). */
export function inlineStatementsOfRole(template: Template, roleId: string): Statement[] {
  const role = resourcesOf(template, 'AWS::IAM::Role', inlinePoliciesSchema).get(roleId);
  if (!role) throw new Error(`No role ${roleId}`);
  return (role.Properties.Policies ?? []).flatMap((policy) => policy.PolicyDocument.Statement);
}

const trustSchema = z.object({
  Properties: z.object({
    AssumeRolePolicyDocument: z.object({
      Statement: z.array(
        z.object({
          Effect: z.string(),
          Action: z.string(),
          Principal: z.object({ Service: z.string() }),
          Condition: z.unknown().optional(),
        }),
      ),
    }),
  }),
});

/** Who may assume the role, and on what conditions. */
export function trustOfRole(template: Template, roleId: string) {
  const role = resourcesOf(template, 'AWS::IAM::Role', trustSchema).get(roleId);
  if (!role) throw new Error(`No role ${roleId}`);
  return role.Properties.AssumeRolePolicyDocument.Statement;
}

/** A statement's resources as a list, whether the template holds one or several. */
export function resourcesOfStatement(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

const queueSchema = z.object({
  DeletionPolicy: z.string().optional(),
  Properties: z.object({
    SqsManagedSseEnabled: z.boolean().optional(),
    KmsMasterKeyId: z.unknown().optional(),
    MessageRetentionPeriod: z.number().optional(),
    VisibilityTimeout: z.number().optional(),
    RedrivePolicy: z.object({ deadLetterTargetArn: getAttArn, maxReceiveCount: z.number() }).optional(),
  }),
});

export type QueueView = z.infer<typeof queueSchema>;

export function queues(template: Template): Map<string, QueueView> {
  return resourcesOf(template, 'AWS::SQS::Queue', queueSchema);
}

const queuePolicySchema = z.object({
  Properties: z.object({
    Queues: z.array(ref),
    PolicyDocument: z.object({
      Statement: z.array(
        z.object({
          Effect: z.string(),
          Action: z.unknown(),
          Condition: z.unknown().optional(),
          Principal: z.unknown(),
        }),
      ),
    }),
  }),
});

/** Resource-policy statements of each queue, by the queue's logical id. */
export function queuePolicyStatements(template: Template): Map<string, unknown[]> {
  const byQueue = new Map<string, unknown[]>();
  for (const policy of resourcesOf(template, 'AWS::SQS::QueuePolicy', queuePolicySchema).values()) {
    for (const queue of policy.Properties.Queues) {
      byQueue.set(queue.Ref, [...(byQueue.get(queue.Ref) ?? []), ...policy.Properties.PolicyDocument.Statement]);
    }
  }
  return byQueue;
}

const scheduleSchema = z.object({
  Properties: z.object({
    ScheduleExpression: z.string(),
    State: z.string(),
    Target: z.object({
      Arn: getAttArn,
      RoleArn: getAttArn,
      DeadLetterConfig: z.object({ Arn: getAttArn }).optional(),
      RetryPolicy: z.object({ MaximumEventAgeInSeconds: z.number(), MaximumRetryAttempts: z.number() }),
      Input: z.string().optional(),
    }),
  }),
});

export function schedules(template: Template) {
  return [...resourcesOf(template, 'AWS::Scheduler::Schedule', scheduleSchema).values()].map(
    (schedule) => schedule.Properties,
  );
}

const eventSourceMappingSchema = z.object({
  Properties: z.object({
    /** A queue's `Arn`, or a table's `StreamArn`. */
    EventSourceArn: z.object({ 'Fn::GetAtt': z.tuple([z.string(), z.enum(['Arn', 'StreamArn'])]) }),
    FunctionName: ref,
    BatchSize: z.number().optional(),
    MaximumBatchingWindowInSeconds: z.number().optional(),
    FunctionResponseTypes: z.array(z.string()).optional(),
    ScalingConfig: z.object({ MaximumConcurrency: z.number() }).optional(),
    StartingPosition: z.string().optional(),
    BisectBatchOnFunctionError: z.boolean().optional(),
    MaximumRetryAttempts: z.number().optional(),
    MaximumRecordAgeInSeconds: z.number().optional(),
    ParallelizationFactor: z.number().optional(),
    DestinationConfig: z.object({ OnFailure: z.object({ Destination: getAttArn }) }).optional(),
    FilterCriteria: z.object({ Filters: z.array(z.object({ Pattern: z.string() })) }).optional(),
  }),
});

export function eventSourceMappings(template: Template) {
  return [...resourcesOf(template, 'AWS::Lambda::EventSourceMapping', eventSourceMappingSchema).values()].map(
    (mapping) => mapping.Properties,
  );
}

const ruleSchema = z.object({
  Properties: z.object({
    EventBusName: ref.optional(),
    EventPattern: z.unknown(),
    State: z.string().optional(),
    Targets: z.array(
      z.object({
        Arn: getAttArn,
        DeadLetterConfig: z.object({ Arn: getAttArn }).optional(),
        RetryPolicy: z.object({ MaximumEventAgeInSeconds: z.number(), MaximumRetryAttempts: z.number() }).optional(),
        /** What the target receives instead of the whole event, when one of these is set. */
        Input: z.unknown().optional(),
        InputPath: z.unknown().optional(),
        InputTransformer: z.unknown().optional(),
        SqsParameters: z.unknown().optional(),
      }),
    ),
  }),
});

/** EventBridge rules, by logical id. */
export function rules(template: Template) {
  return new Map(
    [...resourcesOf(template, 'AWS::Events::Rule', ruleSchema)].map(([id, rule]) => [id, rule.Properties]),
  );
}

const permissionSchema = z.object({
  Properties: z.object({
    Action: z.string(),
    FunctionName: z.unknown(),
    Principal: z.string(),
    SourceArn: z.unknown().optional(),
  }),
});

/** Resource-policy statements on Lambda functions (who else may invoke them). */
export function lambdaPermissions(template: Template) {
  return [...resourcesOf(template, 'AWS::Lambda::Permission', permissionSchema).values()].map((p) => p.Properties);
}

/** The actions of `statements` that start with `prefix` (`''` for all). */
export function actionsOf(statements: readonly Statement[], prefix: string): Set<string> {
  return new Set(statements.flatMap((s) => s.Action).filter((action) => action.startsWith(prefix)));
}

/** Whether an IAM action pattern (`dynamodb:*`, `*`, or exact) covers `action`. */
function covers(pattern: string, action: string): boolean {
  return pattern === action || (pattern.endsWith('*') && action.startsWith(pattern.slice(0, -1)));
}

/** Every resource any Allow statement grants `action` on, wildcard actions included. */
export function resourcesGranting(statements: readonly Statement[], action: string): unknown[] {
  return statements
    .filter((s) => s.Effect === 'Allow' && s.Action.some((pattern) => covers(pattern, action)))
    .flatMap(resourcesOfStatement);
}

const bucketSchema = z.object({
  DeletionPolicy: z.string().optional(),
  UpdateReplacePolicy: z.string().optional(),
  DependsOn: z.array(z.string()).optional(),
  Properties: z.object({
    BucketName: z.unknown().optional(),
    BucketEncryption: z
      .object({
        ServerSideEncryptionConfiguration: z.array(
          z.object({ ServerSideEncryptionByDefault: z.object({ SSEAlgorithm: z.string() }) }),
        ),
      })
      .optional(),
    PublicAccessBlockConfiguration: z.record(z.string(), z.boolean()).optional(),
    OwnershipControls: z.object({ Rules: z.array(z.object({ ObjectOwnership: z.string() })) }).optional(),
    VersioningConfiguration: z.object({ Status: z.string() }).optional(),
    LifecycleConfiguration: z.object({ Rules: z.array(z.record(z.string(), z.unknown())) }).optional(),
    CorsConfiguration: z.object({ CorsRules: z.array(z.record(z.string(), z.unknown())) }).optional(),
    LoggingConfiguration: z
      .object({
        DestinationBucketName: ref,
        LogFilePrefix: z.string().optional(),
        // Set where the logs are partitioned by date (reconciliation); absent for simple prefixes (receipts).
        TargetObjectKeyFormat: z.unknown().optional(),
      })
      .optional(),
    NotificationConfiguration: z.record(z.string(), z.unknown()).optional(),
  }),
});

export type BucketView = z.infer<typeof bucketSchema>;

/** S3 buckets, by logical id. */
export function buckets(template: Template): Map<string, BucketView> {
  return resourcesOf(template, 'AWS::S3::Bucket', bucketSchema);
}

const bucketPolicySchema = z.object({
  Properties: z.object({
    Bucket: ref,
    PolicyDocument: z.object({
      Statement: z.array(
        z.object({
          Effect: z.string(),
          Action: z.unknown(),
          Principal: z.unknown(),
          Resource: z.unknown(),
          Condition: z.unknown().optional(),
        }),
      ),
    }),
  }),
});

export type BucketPolicyStatement = z.infer<
  typeof bucketPolicySchema
>['Properties']['PolicyDocument']['Statement'][number];

/** Resource-policy statements of each bucket, by the bucket's logical id. */
export function bucketPolicyStatements(template: Template): Map<string, BucketPolicyStatement[]> {
  const byBucket = new Map<string, BucketPolicyStatement[]>();
  for (const policy of resourcesOf(template, 'AWS::S3::BucketPolicy', bucketPolicySchema).values()) {
    const id = policy.Properties.Bucket.Ref;
    byBucket.set(id, [...(byBucket.get(id) ?? []), ...policy.Properties.PolicyDocument.Statement]);
  }
  return byBucket;
}

/** An IAM string pattern (`*` any run, `?` one character) against a value, as StringLike matches. */
export function iamGlob(pattern: string, value: string): boolean {
  const expression = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${expression}$`).test(value);
}
