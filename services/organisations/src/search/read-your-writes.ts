import type { WriteListener } from '@svc/table';

/**
 * Read-your-writes for organisation searches: given to `onItemsWritten` by every composition root
 * whose code writes organisations (organisations, onboarding's approval, the seed), so an
 * organisation answered 201/200 is found by the next search.
 */
export const projectWrittenOrganisations: WriteListener = async (items) => {
  if (!items.some((item) => item.entity === 'organisation')) return;
  const { ORGANISATION_PROJECTION } = await import('./organisation-search');
  await ORGANISATION_PROJECTION.project(items);
};
