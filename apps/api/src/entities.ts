import { PAYMENT, PAYMENT_SOURCE } from '@svc/payments';
import { INVOICE, PLAN, SUBSCRIPTION } from '@svc/subscriptions';
import { SUPPORTER } from '@svc/supporters';
import type { DescribedEntity } from '@svc/table';
import { ENDPOINT, EVENT_SUBSCRIPTION } from '@svc/webhooks';

/**
 * The item types described by `defineEntity` (@svc/table), each domain's: docs/access-patterns.md
 * is made from them (`pnpm docs:entities`), and the IAM leading keys of the partitions a function
 * writes come from them (infra/constructs/table-access.ts). Item types not yet described keep
 * their access patterns in their repository's comment (docs/access-patterns.md lists them).
 */
export const ENTITIES: readonly DescribedEntity[] = [
  PAYMENT,
  PAYMENT_SOURCE,
  SUPPORTER,
  PLAN,
  SUBSCRIPTION,
  INVOICE,
  ENDPOINT,
  EVENT_SUBSCRIPTION,
];
