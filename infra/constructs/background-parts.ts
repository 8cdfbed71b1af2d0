import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyDocument, type PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';
import type { ServiceFunction } from './service-function';

/**
 * An execution role for EventBridge Scheduler, assumable only for schedules of this account's
 * default group (the confused-deputy conditions). Its one inline policy is part of the role
 * resource, so a schedule never exists with a role that cannot yet do its job.
 */
export function schedulerRole(
  scope: Construct,
  id: string,
  options: { description: string; policyName: string; statements: PolicyStatement[] },
): Role {
  const stack = Stack.of(scope);
  return new Role(scope, id, {
    description: options.description,
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: {
        StringEquals: {
          'aws:SourceAccount': stack.account,
          'aws:SourceArn': stack.formatArn({
            service: 'scheduler',
            resource: 'schedule-group',
            resourceName: 'default',
          }),
        },
      },
    }),
    inlinePolicies: { [options.policyName]: new PolicyDocument({ statements: options.statements }) },
  });
}

/** The ARN IAM checks for a Query on one index of the table. */
export function indexArn(table: ITable, indexName: string): string {
  return `${table.tableArn}/index/${indexName}`;
}

/**
 * A queue of the service: SQS-managed encryption (messages carry ids or events that are on the
 * bus already, never secrets or card data, and a KMS key would need grants for every producer,
 * consumer and AWS service that writes dead letters), TLS only, the stage's removal policy.
 */
export function encryptedQueue(
  scope: Construct,
  id: string,
  stage: StageConfig,
  props: Pick<QueueProps, 'retentionPeriod' | 'visibilityTimeout' | 'deadLetterQueue'>,
): Queue {
  return new Queue(scope, id, {
    ...props,
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    removalPolicy: stage.removalPolicy,
  });
}

/** How long a dead-letter queue keeps what failed: SQS's longest, for someone to look at it. */
export const DEAD_LETTER_RETENTION = Duration.days(14);

/**
 * A worker's queue and its dead-letter queue (`<prefix>Queue`, `<prefix>DeadLetterQueue`): a
 * message received `maxReceiveCount` times without success moves there, kept 14 days.
 */
export function queueWithDeadLetters(
  scope: Construct,
  prefix: string,
  stage: StageConfig,
  props: { visibilityTimeout: Duration; maxReceiveCount: number; retentionPeriod?: Duration },
): { queue: Queue; deadLetterQueue: Queue } {
  const deadLetterQueue = encryptedQueue(scope, `${prefix}DeadLetterQueue`, stage, {
    retentionPeriod: DEAD_LETTER_RETENTION,
  });
  const queue = encryptedQueue(scope, `${prefix}Queue`, stage, {
    ...(props.retentionPeriod ? { retentionPeriod: props.retentionPeriod } : {}),
    visibilityTimeout: props.visibilityTimeout,
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
  });
  return { queue, deadLetterQueue };
}

/**
 * A custom resource provider whose framework function gets a role and log group of ours, so it
 * carries no AWSLambdaBasicExecutionRole (which may write to every log group) and keeps the
 * stage's retention; `handler` does the work.
 */
export function customResourceProvider(
  scope: Construct,
  handler: ServiceFunction,
  stage: StageConfig,
  description: string,
): Provider {
  const logGroup = new LogGroup(scope, 'ProviderLogs', {
    retention: stage.logRetention,
    removalPolicy: stage.removalPolicy,
  });
  const role = new Role(scope, 'ProviderRole', {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `${description} provider framework (execution role)`,
  });
  logGroup.grantWrite(role);
  const provider = new Provider(scope, 'Provider', {
    onEventHandler: handler.function,
    frameworkOnEventRole: role,
    logGroup,
  });
  const handlerId = Stack.of(scope).getLogicalId(handler.function.node.defaultChild as CfnFunction);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${handlerId}.Arn>:*]`,
    reason: `CDK provider framework grant: invoke the ${description} function and its versions (":*"); it names that one function only.`,
  });
  return provider;
}
