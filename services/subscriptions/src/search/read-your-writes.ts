import type { WriteListener } from '@svc/table';

/**
 * Read-your-writes for subscription searches: given to `onItemsWritten` by every composition root
 * whose code writes subscriptions or plans (subscriptions, payments, the billing workers), so a
 * subscription answered 201/200 is found by the next search.
 */
export const projectWrittenSubscriptions: WriteListener = async (items) => {
  if (!items.some((item) => item.entity === 'subscription' || item.entity === 'subscription_plan')) return;
  const { SUBSCRIPTION_PROJECTION } = await import('./subscription-search');
  await SUBSCRIPTION_PROJECTION.project(items);
};
