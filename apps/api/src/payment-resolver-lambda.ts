// The payment resolver's entry: a payment it settles may start a subscription or pay an invoice.
import { wireDomains } from './wiring';

wireDomains();

export { handler } from '@svc/payments/payment-resolver';
