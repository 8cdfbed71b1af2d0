import type { WriteListener } from '@svc/table';

/**
 * Read-your-writes for payment searches: given to `onItemsWritten` by every composition root whose
 * code writes payments (payments, billing, reconciliation, the resolver), so a payment answered
 * 201/200 is found by the next search. The search module (and its engine) is loaded at the first
 * write of a payment, never by a process that writes none.
 */
export const projectWrittenPayments: WriteListener = async (items) => {
  if (!items.some((item) => item.entity === 'payment')) return;
  const { projectPayments, paymentsAmong } = await import('./payment-search');
  await projectPayments(paymentsAmong(items));
};
