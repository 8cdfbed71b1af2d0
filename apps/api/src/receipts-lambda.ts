// The receipts function's entry (contract section 13): receipt settings, batches, receipts and
// their documents, Gift Aid declarations and claims.
export { handler } from '@svc/receipts/lambda';
