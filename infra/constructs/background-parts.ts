import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyDocument, type PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';

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
