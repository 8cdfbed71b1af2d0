import type { SubscriptionsPort } from '@svc/payments';
import { recordLateRecurringSuccess, reopenReturnedDebit, settle } from './domain/billing';
import { checkPaymentSubscription, subscriptionForPayment } from './domain/from-payment';

/** What payments asks of subscriptions (its SubscriptionsPort), as this domain answers it. */
export const subscriptionsForPayments: SubscriptionsPort = {
  checkPaymentSubscription,
  subscriptionForPayment,
  settleChargeAttempt: settle,
  reopenReturnedDebit,
  recordLateRecurringSuccess,
};
