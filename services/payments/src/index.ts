export { paymentShape, paymentSourceShape, refundShape } from './domain/shapes';
export { paymentsRoutes } from './handlers/routes';
export { findPayment, type PaymentRecord, paymentFromItem, paymentItem } from './repository/payment-repository';
export { findPaymentSource, type PaymentSourceRecord } from './repository/payment-source-repository';
