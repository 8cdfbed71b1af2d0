// What infra needs of the receipts domain: the fonts copied beside its functions' code, and the
// payment events its bus rule sends to the receipts queue.
export { RECEIPT_FONT_FILES, RECEIPT_PAYMENT_EVENTS } from '@svc/receipts';
