import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';
import type { StageConfig } from '../config/stages';

/**
 * Where the stage's alarms go: one SNS topic (encrypted with a key CloudWatch may use, HTTPS
 * only) that every alarm of the stack notifies when it fires and when it is OK again, with the
 * e-mail subscriptions of the stage config, and any topics the config names (a chat or paging
 * integration's), notified directly.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;
  /** Every topic an alarm notifies: ours, then the config's. */
  readonly targets: readonly ITopic[];

  constructor(scope: Construct, id: string, props: { stage: StageConfig }) {
    super(scope, id);
    const { stage } = props;
    const key = new Key(this, 'Key', {
      description: `svc fundraising alarm topic (${stage.name})`,
      enableKeyRotation: true,
      removalPolicy: stage.removalPolicy,
    });
    // CloudWatch publishes alarm state changes to the encrypted topic with this key.
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'Topic', {
      displayName: `svc fundraising alarms (${stage.name})`,
      masterKey: key,
      enforceSSL: true,
    });
    for (const email of stage.alarms.notify?.emails ?? []) this.topic.addSubscription(new EmailSubscription(email));
    this.targets = [
      this.topic,
      ...(stage.alarms.notify?.topicArns ?? []).map((arn, index) => Topic.fromTopicArn(this, `Notify${index}`, arn)),
    ];
  }

  /** Sends every alarm found under `root` (when it fires and when it recovers) to the targets. */
  notifyFrom(root: IConstruct): Alarm[] {
    const alarms = root.node.findAll().filter((node): node is Alarm => node instanceof Alarm);
    for (const alarm of alarms) {
      for (const target of this.targets) {
        alarm.addAlarmAction(new SnsAction(target));
        alarm.addOkAction(new SnsAction(target));
      }
    }
    return alarms;
  }
}
