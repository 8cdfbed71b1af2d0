import { WORKERS } from '@svc/api';
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { RateExpression, StageConfig } from '../config/stages';
import { schedulerRole } from './background-parts';
import { ServiceFunction } from './service-function';
import { grantTableAccess, partitionsOf, type TableGrant, writeGrant } from './table-access';

export interface PaymentResolverProps {
  stage: StageConfig;
  table: ITable;
  stripeSecret: ISecret;
}

/** How often payments whose provider did not answer are asked about again. */
export const RESOLVE_SCHEDULE: RateExpression = 'rate(5 minutes)';

/**
 * What the resolver sends: reads of payments (and of what a settled payment starts: its
 * subscription's plan and account), and the guarded writes that settle one (the payment, a new
 * source, a new subscription, in one TransactWriteItems, which IAM checks per operation).
 */
export const PAYMENT_RESOLVER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem'],
  // The payments (and their sources) it settles, the early callbacks it applies, and what a
  // settled payment starts: its subscription, the plan and the account.
  readKeys: [
    ...partitionsOf('payment', 'payment_source', 'early_callback', 'subscription'),
    ...partitionsOf('subscription_plan', 'account'),
  ],
  // The due index for its work; gsi1 for the plans of a subscription a settled payment starts.
  indexes: ['due', 'gsi1'],
  // A due-index partition is a shard of due work (PAYMENT_DUE#<shard>), named by no entity.
  indexKeys: 'any',
  // Versioned puts of what it settles (the payment, a new source, a new subscription); early
  // callbacks it applies or alarms are taken out of the due index in place (domain/early-callback-store.ts).
  ...writeGrant(
    { actions: ['dynamodb:PutItem'], keys: partitionsOf('payment', 'payment_source', 'subscription', 'invoice') },
    { actions: ['dynamodb:UpdateItem'], keys: partitionsOf('early_callback') },
  ),
};

/**
 * The payment resolver: scheduled every five minutes, it reads the due index's payments with an
 * unknown outcome and asks their provider (Stripe: by intent, or by our uuid in its metadata).
 * Its role holds only what that sends: no scan, no delete, no other index than these two.
 */
export class PaymentResolver extends Construct {
  readonly resolver: ServiceFunction;
  readonly schedule: Schedule;

  constructor(scope: Construct, id: string, props: PaymentResolverProps) {
    super(scope, id);
    const { stage, table } = props;
    this.resolver = new ServiceFunction(this, 'Resolver', {
      entry: WORKERS.paymentResolver.entry,
      memoryMb: WORKERS.paymentResolver.memoryMb,
      description: `svc fundraising payment resolver (${stage.name})`,
      timeout: Duration.minutes(2),
      environment: {
        SVC_TABLE_NAME: table.tableName,
        SVC_STAGE: stage.name,
        SVC_SIMULATED_PROVIDER: stage.simulatedProvider,
        SVC_STRIPE_SECRET_ARN: props.stripeSecret.secretArn,
        POWERTOOLS_SERVICE_NAME: 'payment-resolver',
      },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    grantTableAccess(table, this.resolver.role, PAYMENT_RESOLVER_TABLE_GRANT);
    props.stripeSecret.grantRead(this.resolver.role);
    // A missed or failed pass is redone by the next one; a retry would only overlap it.
    this.resolver.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(5) });
    const role = schedulerRole(this, 'ScheduleRole', {
      description: 'EventBridge Scheduler: starts the payment resolver (execution role)',
      policyName: 'StartPaymentResolver',
      statements: [
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.resolver.function.functionArn] }),
      ],
    });
    this.schedule = new Schedule(this, 'Schedule', {
      schedule: ScheduleExpression.expression(RESOLVE_SCHEDULE),
      description: `Asks payment providers again about payments whose answer never came (${stage.name})`,
      target: new LambdaInvoke(this.resolver.function, {
        // The policy is on the role already; LambdaInvoke's own grant would add `<function>:*`.
        role: role.withoutPolicyUpdates(),
        retryAttempts: 0,
        maxEventAge: Duration.minutes(5),
      }),
    });
  }
}
