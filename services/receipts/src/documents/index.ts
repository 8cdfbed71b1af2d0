/**
 * The receipts' PDF documents: a pure module (no table, no clock, no network). The domain
 * decides what a receipt says; `renderReceiptPdf` prints it for its country.
 */
export { germanAmountInWords, germanCardinal } from './amount-in-words';
export { RECEIPT_FONT_DIR, RECEIPT_FONT_FILES, RECEIPT_FONTS } from './font-files';
export { decimalString, formatMoney, formatNumber, type MoneyStyle } from './money-text';
export {
  DonorName,
  GermanExemption,
  IsoDate,
  type ReceiptCountry,
  ReceiptDocument,
  ReceiptGift,
} from './receipt-document';
export { renderReceiptPdf } from './render-receipt';
