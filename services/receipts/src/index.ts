import type { AnyRoute } from '@svc/http';
import { giftAidRoutes } from './gift-aid';
import { receiptRoutes } from './handlers/routes';

export { RECEIPT_FONT_FILES } from './documents/font-files';
export { resetReceiptsQueueClient, runBatchPage, sendReceiptsMessage } from './domain/batches';
export { donorReceiptPdf, donorReceipts } from './domain/donor';
export { giftsOfOrganisation, SUPPORTERS_PER_PAGE } from './domain/gifts';
export { ISSUE_CHUNK, yearBounds } from './domain/issue';
export { receiptResponse, receiptShape } from './domain/shapes';
export { processReceiptsBatch, RECEIPT_PAYMENT_EVENTS } from './domain/worker';
export { receiptEventData } from './event-data';
export { GIFT_AID_DECLARATION, GIFT_AID_TEXT } from './gift-aid';
export {
  RECEIPT,
  RECEIPT_BATCH,
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  RECEIPT_SETTINGS,
  type ReceiptRecord,
  receiptNumber,
} from './repository/receipt-repository';
export { resetDocumentClient } from './storage/documents';

/** The receipts domain's routes (contract section 13): receipt settings, batches, receipts, Gift Aid. */
export const receiptsRoutes: AnyRoute[] = [...receiptRoutes, ...giftAidRoutes];
