// The payment resolver's entry: a payment it settles may start a subscription or pay an invoice.
import { wirePayments } from './wiring-payments';

wirePayments();

export { handler } from '@svc/payments/payment-resolver';
