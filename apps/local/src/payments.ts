import { asFunction } from '@svc/core';
import { resolveUnknownPayments } from '@svc/payments';
import { registerBackgroundTask } from './background';

/**
 * Payments whose provider did not answer are asked about again, as the scheduled payment
 * resolver does in AWS (every five minutes there; every ten seconds here, and in settle).
 */
registerBackgroundTask({
  name: 'payment-resolver',
  intervalMs: 10_000,
  runOnce: () => asFunction('payment-resolver', resolveUnknownPayments),
});
