// The payments function's entry: the domain's handler, with the domains it reaches wired in first.
import { wireDomains } from './wiring';

wireDomains();

export { handler } from '@svc/payments/lambda';
