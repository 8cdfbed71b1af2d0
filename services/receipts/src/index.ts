import type { AnyRoute } from '@svc/http';
import { giftAidRoutes } from './gift-aid';
import { receiptRoutes } from './handlers/routes';

export { resetReceiptsQueueClient, sendReceiptsMessage } from './domain/batches';
export { processReceiptsBatch, RECEIPT_PAYMENT_EVENTS } from './domain/worker';
export { receiptEventData } from './event-data';
export { GIFT_AID_DECLARATION, GIFT_AID_TEXT } from './gift-aid';
export {
  RECEIPT,
  RECEIPT_BATCH,
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  RECEIPT_SETTINGS,
} from './repository/receipt-repository';
export { resetDocumentClient } from './storage/documents';

/** The receipts domain's routes (contract section 13): receipt settings, batches, receipts, Gift Aid. */
export const receiptsRoutes: AnyRoute[] = [...receiptRoutes, ...giftAidRoutes];
