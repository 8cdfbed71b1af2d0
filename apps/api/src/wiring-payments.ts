import { type SubscriptionsPort, useSubscriptions } from '@svc/payments';

let loaded: Promise<SubscriptionsPort> | undefined;

/**
 * The subscriptions domain's half of the port, loaded at the first payment that starts or settles
 * a subscription: most payments never do, and the payments function's cold start does not read
 * subscriptions, its calendar (luxon) and its schemas for them.
 */
function subscriptionsPort(): Promise<SubscriptionsPort> {
  if (!loaded) {
    const started = import('@svc/subscriptions/payments-port').then((module) => module.subscriptionsForPayments);
    loaded = started;
    // A failed load is tried again at the next call, not remembered.
    started.catch(() => {
      if (loaded === started) loaded = undefined;
    });
  }
  return loaded;
}

/** Payments reaches subscriptions through its port (a payment that starts or settles one). */
export function wirePayments(): void {
  useSubscriptions({
    checkPaymentSubscription: async (...args) => (await subscriptionsPort()).checkPaymentSubscription(...args),
    subscriptionForPayment: async (...args) => (await subscriptionsPort()).subscriptionForPayment(...args),
    settleChargeAttempt: async (...args) => (await subscriptionsPort()).settleChargeAttempt(...args),
    reopenReturnedDebit: async (...args) => (await subscriptionsPort()).reopenReturnedDebit(...args),
    recordLateRecurringSuccess: async (...args) => (await subscriptionsPort()).recordLateRecurringSuccess(...args),
  });
}
