import { IDEMPOTENCY_RECORD } from '@svc/http';
import { CLIENT, SIGNING_KEYS } from '@svc/identity';
import { MAIL } from '@svc/mail';
import {
  CONNECT_TICKET,
  INTEGRATION,
  PARTNER_LINK,
  PASSWORD_GUESSES,
  PROCESS,
  PROCESS_TOKEN,
  USER,
  USER_EMAIL,
} from '@svc/onboarding';
import { ACCOUNT, ACCOUNT_ADDRESS, ORGANISATION, ORGANISATION_ADDRESS } from '@svc/organisations';
import {
  EARLY_CALLBACK,
  PAYMENT,
  PAYMENT_SOURCE,
  PROVIDER_CUSTOMER,
  PROVIDER_EVENT,
  PROVIDER_HEALTH,
  PROVIDER_RATE,
  ROUTE_CALLED,
} from '@svc/payments';
import { PORTAL_CODE, PORTAL_LINK, PORTAL_LOGIN_COUNT, PORTAL_SESSION, PORTAL_SETTINGS } from '@svc/portal';
import {
  GIFT_AID_DECLARATION,
  GIFT_AID_TEXT,
  RECEIPT,
  RECEIPT_BATCH,
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  RECEIPT_SETTINGS,
} from '@svc/receipts';
import { REPORT, SOURCE_CONFIGURATION } from '@svc/reconciliation';
import { DEFAULT_PLAN, INVOICE, PLAN, SUBSCRIPTION } from '@svc/subscriptions';
import { SUPPORTER } from '@svc/supporters';
import type { DescribedEntity } from '@svc/table';
import {
  DELIVERY,
  ENDPOINT,
  EVENT_SUBSCRIPTION,
  RESPONSE,
  WEBHOOK_ENDPOINT_COUNT,
  WEBHOOK_IN_FLIGHT,
  WEBHOOK_PACE,
  WEBHOOK_PAUSE,
  WEBHOOK_URL,
} from '@svc/webhooks';

/**
 * The item types described by `defineEntity` (@svc/table), each domain's: docs/access-patterns.md
 * is made from them (`pnpm docs:entities`), and the IAM leading keys of the partitions a function
 * writes come from them (infra/constructs/table-access.ts). Item types not yet described keep
 * their access patterns in their repository's comment (docs/access-patterns.md lists them).
 */
export const ENTITIES: readonly DescribedEntity[] = [
  CLIENT,
  SIGNING_KEYS,
  IDEMPOTENCY_RECORD,
  ORGANISATION,
  ORGANISATION_ADDRESS,
  ACCOUNT,
  ACCOUNT_ADDRESS,
  PAYMENT,
  PAYMENT_SOURCE,
  PROVIDER_CUSTOMER,
  PROVIDER_EVENT,
  PROVIDER_HEALTH,
  PROVIDER_RATE,
  ROUTE_CALLED,
  EARLY_CALLBACK,
  SUPPORTER,
  PLAN,
  SUBSCRIPTION,
  INVOICE,
  DEFAULT_PLAN,
  ENDPOINT,
  WEBHOOK_URL,
  WEBHOOK_ENDPOINT_COUNT,
  EVENT_SUBSCRIPTION,
  DELIVERY,
  RESPONSE,
  WEBHOOK_PACE,
  WEBHOOK_PAUSE,
  WEBHOOK_IN_FLIGHT,
  SOURCE_CONFIGURATION,
  REPORT,
  MAIL,
  USER,
  USER_EMAIL,
  CONNECT_TICKET,
  PASSWORD_GUESSES,
  INTEGRATION,
  PARTNER_LINK,
  PROCESS,
  PROCESS_TOKEN,
  PORTAL_SETTINGS,
  PORTAL_LINK,
  PORTAL_SESSION,
  PORTAL_CODE,
  PORTAL_LOGIN_COUNT,
  RECEIPT_SETTINGS,
  RECEIPT,
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  RECEIPT_BATCH,
  GIFT_AID_DECLARATION,
  GIFT_AID_TEXT,
];
