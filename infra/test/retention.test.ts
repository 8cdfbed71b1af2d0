import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, type StageName } from '../config/stages';
import { templateOf, useSynthesizedApp } from './support/synth';

useSynthesizedApp();

/**
 * What each stage keeps when its stack is deleted (or a resource replaced), and why. Everything
 * kept is `RetainExceptOnCreate` (RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE): kept on delete and
 * on replacement, removed when the create that made it rolls back, so a failed first deploy can
 * be run again without colliding with its own named leftovers (the bucket's fixed name). The
 * search cluster is not kept but snapshotted: it is a projection of the table, and a kept cluster
 * would keep its subnet group and security group, so the VPC (and `cdk destroy`) could never
 * finish.
 */
const KEPT: Readonly<Record<string, { count: number; why: string }>> = {
  'AWS::DynamoDB::Table': { count: 1, why: 'the data; its point-in-time backups live and die with it' },
  'AWS::SecretsManager::Secret': {
    count: 5,
    why: 'signing keys, card fingerprint key, hash key (restored idempotency records and onboarding tokens are hashed under it), Stripe keys, captcha secret',
  },
  'AWS::KMS::Key': {
    count: 2,
    why: "the webhook secrets key (restored endpoints' passwords and HMAC keys are sealed under it) and the alarm topic's key",
  },
  'AWS::S3::Bucket': {
    count: 4,
    why: "uploaded bank files and reports, the access logs of who read them (and the receipts'), the edge's access logs (every request's client address), and the receipts' PDFs (kept for the stage's receipt retention, ten years in prod)",
  },
  'AWS::SQS::Queue': {
    count: 16,
    why: 'dead letters (and the work queues they redrive to) still to be replayed, mail and receipts among them',
  },
  'AWS::Logs::LogGroup': {
    count: 29,
    why: "every function's and the API's logs (the portal's, the mail worker's and sweeper's, the receipts function's and worker's too): the audit trail outlives the stack",
  },
};

/** Resources whose deletion keeps a final copy instead. */
const SNAPSHOTTED = { 'AWS::RDS::DBCluster': 1 } as const;

/** Types a kept resource may need from the same stack: if it refers to one, that one must be kept too. */
const NEEDED = /^AWS::(KMS::Key|EC2::|RDS::DBSubnetGroup|RDS::DBCluster|SQS::Queue|S3::Bucket|DynamoDB::Table)/;

interface Resource {
  Type: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Properties?: unknown;
}

function resourcesOf(stage: StageName): Record<string, Resource> {
  return templateOf(stage).toJSON().Resources as Record<string, Resource>;
}

/** Logical ids a value refers to (Ref, Fn::GetAtt), anywhere inside it. */
function referencesIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) referencesIn(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string') found.add(inner);
      else if (key === 'Fn::GetAtt' && Array.isArray(inner) && typeof inner[0] === 'string') found.add(inner[0]);
      else referencesIn(inner, found);
    }
  }
  return found;
}

/** Kept beside a deleted stack (a Snapshot policy deletes the resource once its final snapshot is taken). */
const kept = (resource: Resource) =>
  resource.DeletionPolicy === 'Retain' || resource.DeletionPolicy === 'RetainExceptOnCreate';

describe.each(STAGE_NAMES)('what the %s stack keeps', (stage) => {
  const keepsData = stage !== 'dev';

  it(keepsData ? 'keeps the listed resources, each for its reason, and nothing else' : 'keeps nothing', () => {
    const counts: Record<string, number> = {};
    for (const resource of Object.values(resourcesOf(stage))) {
      if (resource.DeletionPolicy === undefined || resource.DeletionPolicy === 'Delete') continue;
      const kind = `${resource.DeletionPolicy} ${resource.Type}`;
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
    const expected: Record<string, number> = {};
    if (keepsData) {
      for (const [type, { count }] of Object.entries(KEPT)) expected[`RetainExceptOnCreate ${type}`] = count;
      for (const [type, count] of Object.entries(SNAPSHOTTED)) expected[`Snapshot ${type}`] = count;
    }
    expect(counts).toEqual(expected);
  });

  it('keeps nothing with a plain Retain: a failed first deploy removes what it made, so it can be run again', () => {
    const plain = Object.entries(resourcesOf(stage))
      .filter(([, resource]) => resource.DeletionPolicy === 'Retain')
      .map(([id]) => id);
    expect(plain).toEqual([]);
  });

  it('keeps what each kept resource needs: a kept resource refers to no resource that is deleted with the stack', () => {
    const resources = resourcesOf(stage);
    const broken: string[] = [];
    for (const [id, resource] of Object.entries(resources)) {
      if (!kept(resource)) continue;
      for (const target of referencesIn(resource.Properties)) {
        const needed = resources[target];
        if (needed && NEEDED.test(needed.Type) && !kept(needed)) broken.push(`${id} → ${target} (${needed.Type})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps no network: the VPC, its subnets and the cluster’s subnet group go with the stack', () => {
    const network = Object.entries(resourcesOf(stage)).filter(
      ([, resource]) => /^AWS::EC2::|^AWS::RDS::DBSubnetGroup$/.test(resource.Type) && kept(resource),
    );
    expect(network.map(([id]) => id)).toEqual([]);
  });
});
