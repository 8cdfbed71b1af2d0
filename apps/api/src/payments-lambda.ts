// The payments function's entry: the domain's handler, with the domains it reaches wired in first.
import { wirePayments } from './wiring-payments';

wirePayments();

export { handler } from '@svc/payments/lambda';
