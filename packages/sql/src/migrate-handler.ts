import { setTimeout as wait } from 'node:timers/promises';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { searchDb } from './client';
import { migrate } from './migrate';

/**
 * The deploy's schema step (a CloudFormation custom resource): every create and update of the
 * stack brings the search engine's schema up to date before the functions that use it change.
 * A paused Aurora Serverless cluster (0 ACU) answers `DatabaseResumingException` while it wakes:
 * asked again for up to two minutes.
 */
export async function handler(event: CloudFormationCustomResourceEvent) {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  for (let attempt = 1; ; attempt++) {
    try {
      const applied = await migrate(searchDb());
      return { PhysicalResourceId: 'svc-search-schema', Data: { Applied: applied.join(',') } };
    } catch (error) {
      const resuming = (error as { name?: string }).name === 'DatabaseResumingException';
      if (!resuming || attempt >= 24) throw error;
      await wait(5_000);
    }
  }
}
