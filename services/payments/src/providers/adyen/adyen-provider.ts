import { createHash } from 'node:crypto';
import type { CheckoutAPI } from '@adyen/api-library';
import type {
  PaymentRequest as AdyenPaymentRequest,
  PaymentResponse as AdyenPaymentResponse,
} from '@adyen/api-library/lib/src/typings/checkout/models';
import {
  BUSINESS_METRICS,
  deferred,
  isValidIban,
  logger,
  normaliseIban,
  now,
  parseOrThrow,
  providerAmount,
  recordMetric,
  ValidationError,
} from '@svc/core';
import * as z from 'zod';
import { brandOf, rawCardSchema, threeDSecureFields } from '../card-rules';
import { maskIban } from '../iban';
import type {
  Authorisation,
  AuthoriseRequest,
  FoundOutcome,
  Outcome,
  PaymentAtProvider,
  PaymentMethod,
  PaymentProvider,
  ProviderContext,
  RefundOutcome,
} from '../provider';
import { ProviderNotReachedError } from '../provider';
import { ADYEN_PAYMENT_TIMEOUT_MS, adyenCheckout, adyenUnusable } from './adyen-config';
import { AdyenCallError } from './adyen-http';

/**
 * Adyen, through its official library (`@adyen/api-library`, Checkout API v72). A payment is one
 * `/payments` call made under an `Idempotency-Key` derived from our uuid; methods that need the
 * donor (3-D Secure 2, TWINT) answer `RedirectShopper` with Adyen's page, and Adyen sends the
 * donor back to our return endpoint with a `redirectResult` we submit to `/payments/details`.
 * SEPA debits answer `Received` and are settled by Adyen's AUTHORISATION notification.
 *
 * Idempotency. Adyen keeps an idempotency key for at least 7 days and answers a repeated request
 * under it with the first request's answer, never a second payment
 * (https://docs.adyen.com/development-resources/api-idempotency/). Adyen's Checkout API has no
 * way to read a payment by our reference, so an answer that does not come is resolved by Adyen's
 * notifications (every payment gets an AUTHORISATION notification, success true or false,
 * https://docs.adyen.com/development-resources/webhooks/webhook-types/#event-codes), and once
 * CANCEL_UNKNOWN_AFTER_SECONDS have passed without one, by cancelling by our reference
 * (`POST /cancels` with `paymentReference`, Adyen's "cancel without a PSP reference",
 * https://docs.adyen.com/online-payments/cancel/#cancel-without-psp-reference), whose notification
 * says whether it took (see outcomeOf). Never a second payment under a new key.
 *
 * Tokens are Adyen's: a saved instrument (`storePaymentMethod`, one `shopperReference` per
 * supporter) is charged only on Adyen, on the merchant account that saved it.
 */

/**
 * `succeeded` means captured (issue 45). When Adyen captures an authorisation is a setting of the
 * merchant account (immediate, delayed or manual, https://docs.adyen.com/online-payments/capture),
 * and each charity brings its own account, so every payment asks for it explicitly:
 * `captureDelayHours`, "the delay between the authorisation and scheduled auto-capture, specified
 * in hours" (Checkout API v72, PaymentRequest), 0 = at once. A capture the scheme still rejects
 * (CAPTURE_FAILED) or an authorisation that ran out uncaptured (EXPIRE) undoes the success
 * (adyen-notifications.ts). A zero-value authorisation (a source alone) captures nothing.
 */
export const CAPTURE_DELAY_HOURS = 0;

/** As long as the resolver waits before it gives an unknown payment up (resolution.ts GIVE_UP_SECONDS). */
export const CANCEL_UNKNOWN_AFTER_SECONDS = 15 * 60;
/**
 * When a payment neither Adyen's AUTHORISATION nor its TECHNICAL_CANCEL notification has settled
 * is failed: Adyen retries an unaccepted notification for days, so three days without either
 * means nothing was made (https://docs.adyen.com/development-resources/webhooks/#retry-process).
 */
export const GIVE_UP_UNKNOWN_SECONDS = 3 * 86_400;

/** Adyen Web's encrypted card fields (`state.data.paymentMethod` of its Card component). */
const encryptedCard = deferred(() =>
  z
    .object({
      type: z.literal('scheme').optional(),
      encryptedCardNumber: z.string().min(1).max(10_000),
      encryptedExpiryMonth: z.string().min(1).max(10_000),
      encryptedExpiryYear: z.string().min(1).max(10_000),
      encryptedSecurityCode: z.string().min(1).max(10_000).optional(),
      holderName: z.string().max(200).optional(),
      brand: z.string().max(40).optional(),
      checkoutAttemptId: z.string().max(200).optional(),
      ...threeDSecureFields,
      // Adyen Web's own `browserInfo` (its state.data), passed through as sent.
      browserInfo: threeDSecureFields.browser_info,
    })
    .strict(),
);

const cardInput = deferred(() => z.union([encryptedCard, rawCardSchema.strict()]));

/** The same SEPA fields as on Stripe, so a routed profile takes one form; Adyen needs no IP or browser. */
const sepaInput = deferred(() =>
  z
    .object({
      iban: z.string().max(50),
      account_holder: z.string().min(1).max(200),
      email: z.email().max(254).optional(),
      address: z.record(z.string(), z.string()).optional(),
      donor_ip_address: z.string().max(64).optional(),
      donor_user_agent: z.string().max(500).optional(),
    })
    .strict(),
);

type AdyenMethod = AdyenPaymentRequest['paymentMethod'];

function merchantAccount(context: ProviderContext): string {
  const account = context.profile.merchant_account;
  // unusableFor refused a profile without one before any call.
  if (!account) throw new Error('An Adyen payment needs the profile’s merchant_account');
  return account;
}

/**
 * Adyen's amount: "the value must be specified in minor units, given the number of decimals of
 * the currency", and for CLP, CVE, IDR and ISK Adyen's decimals are not ISO's
 * (https://docs.adyen.com/development-resources/currency-codes/): 500 ISK is 50000 there, 1000.00
 * IDR is 1000. Routing refused an amount Adyen cannot take exactly before any call
 * (@svc/core currencies.ts); this throws rather than send another sum.
 */
const amountOf = (amount: { minor: number; currency: string }) => ({
  currency: amount.currency,
  value: providerAmount('adyen', amount.currency, amount.minor),
});

/** The method-specific part of a payment, and what is safe to keep of the input. */
function methodParams(request: AuthoriseRequest): {
  paymentMethod: AdyenMethod;
  masked: Record<string, unknown>;
  browser?: Partial<AdyenPaymentRequest>;
} {
  const { method, paymentInformation, context } = request;
  switch (method) {
    case 'card': {
      const card = parseOrThrow(cardInput, paymentInformation ?? {}, 'payment_information');
      const browser = threeDSecure2(card, request.donor?.email);
      if ('encryptedCardNumber' in card) {
        const {
          type: _type,
          brand: _brand,
          browser_info: _info,
          browserInfo: _web,
          origin: _origin,
          donor_ip_address: _ip,
          email: _email,
          billing_address: _address,
          ...fields
        } = card;
        return { paymentMethod: { type: 'scheme', ...fields } as AdyenMethod, masked: {}, browser };
      }
      if (!context.profile.raw_card_data) {
        throw ValidationError.field(
          'payment_information',
          'error.validation.not_valid',
          'This profile takes Adyen’s encrypted card fields (encryptedCardNumber, encryptedExpiryMonth, encryptedExpiryYear, encryptedSecurityCode from Adyen Web); raw card data is not allowed',
        );
      }
      // Forwarded to Adyen and never kept: only the brand and the last four digits are stored.
      return {
        paymentMethod: {
          type: 'scheme',
          number: card.number,
          expiryMonth: String(card.expiry_month).padStart(2, '0'),
          expiryYear: String(card.expiry_year),
          cvc: card.cvv,
          ...(card.cardholder ? { holderName: card.cardholder } : {}),
        } as AdyenMethod,
        masked: {
          brand: brandOf(card.number),
          last4: card.number.slice(-4),
          expiry_month: card.expiry_month,
          expiry_year: card.expiry_year,
          ...(card.cardholder ? { cardholder: card.cardholder } : {}),
        },
        browser,
      };
    }
    case 'twint':
      // TWINT is a Swiss wallet: CHF only (https://docs.adyen.com/payment-methods/twint/).
      if (request.amount.currency !== 'CHF') {
        throw ValidationError.field('amount.currency', 'error.validation.not_valid', 'TWINT takes CHF only');
      }
      return { paymentMethod: { type: 'twint' } as AdyenMethod, masked: {} };
    case 'sepa_dd': {
      // SEPA Direct Debit: EUR only, the IBAN and the account holder's name
      // (https://docs.adyen.com/payment-methods/sepa-direct-debit/api-only/).
      if (request.amount.currency !== 'EUR') {
        throw ValidationError.field(
          'amount.currency',
          'error.validation.not_valid',
          'SEPA Direct Debit takes EUR only',
        );
      }
      const sepa = parseOrThrow(sepaInput, paymentInformation ?? {}, 'payment_information');
      if (!isValidIban(sepa.iban)) {
        throw ValidationError.field('payment_information.iban', 'error.validation.not_valid', 'This IBAN is not valid');
      }
      const iban = normaliseIban(sepa.iban);
      return {
        paymentMethod: { type: 'sepadirectdebit', iban, ownerName: sepa.account_holder } as AdyenMethod,
        masked: { iban: maskIban(iban), account_holder: sepa.account_holder },
      };
    }
  }
}

type BrowserFields = {
  browser_info?: z.infer<NonNullable<typeof threeDSecureFields.browser_info>>;
  browserInfo?: z.infer<NonNullable<typeof threeDSecureFields.browser_info>>;
  origin?: string | undefined;
  donor_ip_address?: string | undefined;
  email?: string | undefined;
  billing_address?: z.infer<NonNullable<typeof threeDSecureFields.billing_address>>;
};

/**
 * 3-D Secure 2 as Adyen's Checkout API v72 requires it of a card payment the donor makes in a
 * browser (the `/payments` request reference, https://docs.adyen.com/api-explorer/Checkout/72/post/payments):
 * `browserInfo` ("For 3D Secure, the full object is required for web integrations"), `origin`
 * ("Required for the 3D Secure 2 channel Web integration"), `shopperIP` and `shopperEmail`
 * (required for 3D Secure 2 by the card schemes, Visa and JCB among them, for web
 * integrations), and `billingAddress` ("required ... for 3D Secure 2 transactions in all
 * browser-based and mobile implementations. Include all of the fields within this object").
 * Each missing one is a 400 naming it before any call: Adyen would refuse or fall back without
 * authentication. Saved cards charged without the donor (ContAuth) need none of them.
 */
function threeDSecure2(card: BrowserFields, supporterEmail: string | undefined): Partial<AdyenPaymentRequest> {
  const missing = (field: string, what: string) =>
    ValidationError.field(
      `payment_information.${field}`,
      'error.validation.not_blank',
      `Adyen requires ${what} for 3-D Secure 2 on a card payment made in a browser`,
    );
  const info = card.browserInfo ?? card.browser_info;
  if (!info) throw missing('browser_info', 'the browser’s details (Adyen Web’s browserInfo)');
  if (!card.origin) throw missing('origin', 'the donation page’s origin');
  if (!card.donor_ip_address) throw missing('donor_ip_address', 'the donor’s IP address');
  const email = card.email ?? supporterEmail;
  if (!email) throw missing('email', 'the donor’s e-mail address');
  const address = card.billing_address;
  if (!address) throw missing('billing_address', 'the donor’s billing address');
  return {
    browserInfo: info,
    origin: card.origin,
    shopperIP: card.donor_ip_address,
    shopperEmail: email,
    billingAddress: {
      street: address.street,
      houseNumberOrName: address.house_number,
      postalCode: address.postal_code,
      city: address.city,
      country: address.country,
      ...(address.state ? { stateOrProvince: address.state } : {}),
    },
  } as Partial<AdyenPaymentRequest>;
}

const ADYEN_TYPE: Record<PaymentMethod, string> = { card: 'scheme', sepa_dd: 'sepadirectdebit', twint: 'twint' };

/** Our instrument token of an Adyen stored payment method: the shopper and Adyen's id. */
export function adyenInstrumentToken(shopperReference: string, storedPaymentMethodId: string): string {
  return `adyen:${shopperReference}:${storedPaymentMethodId}`;
}

function parseInstrument(token: string): { shopperReference: string; storedPaymentMethodId: string } {
  const [scheme, shopperReference, storedPaymentMethodId] = token.split(':');
  if (scheme !== 'adyen' || !shopperReference || !storedPaymentMethodId)
    throw new Error('Not an Adyen instrument token');
  return { shopperReference, storedPaymentMethodId };
}

/**
 * The id of the payment method Adyen stored: `tokenization.storedPaymentMethodId` in the answer's
 * additional data, or the older `recurring.recurringDetailReference`
 * (https://docs.adyen.com/online-payments/tokenization/create-and-use-tokens/).
 */
export function storedMethodId(additionalData: Record<string, string> | undefined): string | undefined {
  return (
    additionalData?.['tokenization.storedPaymentMethodId'] ?? additionalData?.['recurring.recurringDetailReference']
  );
}

/** Adyen's refusal reasons (https://docs.adyen.com/development-resources/refusal-reasons/) as ours. */
const REFUSALS: Record<string, string> = {
  'Not enough balance': 'insufficient_funds',
  'Expired Card': 'expired_card',
  'CVC Declined': 'incorrect_cvc',
  'Invalid Card Number': 'incorrect_number',
  'Blocked Card': 'card_blocked',
  'Withdrawal amount exceeded': 'amount_limit_exceeded',
  'Withdrawal count exceeded': 'amount_limit_exceeded',
  '3D Not Authenticated': 'authentication_failed',
  'Authentication required': 'authentication_required',
  FRAUD: 'fraudulent',
  'FRAUD-CANCELLED': 'fraudulent',
  Cancelled: 'cancelled',
};

export function refusalReason(reason: string | undefined): string {
  return (reason && REFUSALS[reason]) || 'declined';
}

/**
 * A `/payments` or `/payments/details` answer as our outcome. Only the result codes Adyen
 * documents as final failures fail a payment: `Refused`, `Error` ("There was an error when the
 * payment was being processed. The reason is given in the refusalReason field. This is a final
 * state.") and `Cancelled`
 * (https://docs.adyen.com/online-payments/build-your-integration/payment-result-codes). Any other
 * code, and none, is an unknown outcome (`UNKNOWN_RESULT`), resolved in the background like an
 * answer that never came: `PartiallyAuthorised` (we never ask for partial authorisations, so
 * money may be held for part of the gift), the authentication-only codes, and codes added
 * after this was written. Never `declined` for an answer we do not understand.
 */
export function adyenOutcome(response: Pick<AdyenPaymentResponse, 'resultCode' | 'action' | 'refusalReason'>): Outcome {
  switch (response.resultCode as string | undefined) {
    case 'Authorised':
      return { status: 'succeeded' };
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper': {
      const action = response.action as { type?: string; url?: string; method?: string } | undefined;
      // Our donors follow a link: a redirect Adyen asks to POST (some issuers' 3-D Secure pages)
      // cannot be a link. Nothing is authorised without the donor's challenge, so it fails.
      if (!action?.url || (action.method && action.method !== 'GET'))
        return { status: 'failed', reason: 'redirect_unsupported' };
      return { status: 'pending', action: { action_type: 'redirect', url: action.url } };
    }
    case 'Received':
    case 'Pending':
    case 'PresentToShopper':
      return { status: 'pending', reason: 'processing' };
    case 'Cancelled':
      return { status: 'failed', reason: 'cancelled' };
    case 'Refused':
    case 'Error':
      return { status: 'failed', reason: refusalReason(response.refusalReason) };
    default:
      recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'unknown_result' });
      logger.error(UNKNOWN_RESULT, { result_code: response.resultCode ?? null });
      return UNKNOWN_OUTCOME;
  }
}

/** Logged (ProviderAnomalies, kind unknown_result, alarmed) for a result code we do not act on. */
export const UNKNOWN_RESULT = 'Adyen answered a result code that is no known outcome: resolved in the background';
const UNKNOWN_OUTCOME = { status: 'pending', reason: 'provider_unavailable' } as const satisfies Outcome;

/** Whether an outcome is the unknown one (resolved by reference, as an answer that never came). */
const isUnknown = (outcome: Outcome) =>
  outcome.status === 'pending' && 'reason' in outcome && outcome.reason === 'provider_unavailable';

/** Masked information from Adyen's answer: the brand and the card summary (last four digits). */
function maskedFromResponse(response: AdyenPaymentResponse): Record<string, unknown> {
  const data = response.additionalData ?? {};
  const brand = response.paymentMethod?.brand;
  return {
    ...(brand && brand !== 'sepadirectdebit' && brand !== 'twint' ? { brand } : {}),
    ...(data.cardSummary ? { last4: data.cardSummary } : {}),
  };
}

/** Logged, and counted (ProviderAnomalies, kind access_refused, alarmed), when Adyen refuses our key or merchant account. */
export const ADYEN_ACCESS_REFUSED = 'Adyen refused the API key or merchant account';

function refusedAccess(error: AdyenCallError, context: ProviderContext): void {
  recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'access_refused' });
  logger.error(ADYEN_ACCESS_REFUSED, {
    reason: error.message,
    account: context.profile.merchant_account,
    mode: context.testMode ? 'test' : 'live',
  });
}

export class AdyenUnavailableError extends Error {
  readonly accessRefused: boolean;
  constructor(error: AdyenCallError) {
    super(`Adyen did not answer: ${error.message}`, { cause: error });
    this.name = 'AdyenUnavailableError';
    this.accessRefused = error.kind === 'refused';
  }
}

function asCallError(error: unknown): AdyenCallError {
  if (error instanceof AdyenCallError) return error;
  // Anything else (an answer the library could not read) is not an answer we can act on.
  return new AdyenCallError('unknown', error instanceof Error ? error.message : String(error), { cause: error });
}

/**
 * Our identifiers as Adyen's metadata, which takes keys of at most 20 characters and values of
 * at most 80 (https://docs.adyen.com/api-explorer/Checkout/72/post/payments#request-metadata):
 * `svc_organisation_uuid` becomes `svc_organisation`, and so on.
 */
export function adyenMetadata(metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).map(([key, value]) => [key.replace(/_uuid$/, '').slice(0, 20), value.slice(0, 80)]),
  );
}

/** The shopper a saved instrument belongs to: the supporter, or this payment alone. */
function shopperReference(request: AuthoriseRequest): string {
  return request.donor?.supporterUuid ?? `svc-${request.reference}`;
}

async function authorise(request: AuthoriseRequest): Promise<Authorisation> {
  const { context } = request;
  const { paymentMethod, masked, browser } = methodParams(request);
  const shopper = request.saveInstrument ? shopperReference(request) : undefined;
  const body: AdyenPaymentRequest = {
    merchantAccount: merchantAccount(context),
    // A payment source alone is a zero-value authorisation that stores the method
    // (https://docs.adyen.com/get-started-with-adyen/payment-glossary/#zero-value-auth).
    amount: amountOf(request.sourceOnly ? { minor: 0, currency: request.amount.currency } : request.amount),
    // Captured at once, whatever the charity's merchant account is set to (CAPTURE_DELAY_HOURS).
    ...(request.sourceOnly ? {} : { captureDelayHours: CAPTURE_DELAY_HOURS }),
    reference: request.reference,
    paymentMethod,
    // Where Adyen sends the donor back after its page (3-D Secure 2, TWINT), with `redirectResult`.
    returnUrl: request.approvalUrl,
    channel: 'Web' as AdyenPaymentRequest['channel'],
    shopperInteraction: 'Ecommerce' as AdyenPaymentRequest['shopperInteraction'],
    metadata: adyenMetadata(request.metadata),
    ...(request.donor?.email ? { shopperEmail: request.donor.email } : {}),
    ...browser,
    ...(shopper
      ? {
          storePaymentMethod: true,
          shopperReference: shopper,
          recurringProcessingModel: 'Subscription' as AdyenPaymentRequest['recurringProcessingModel'],
        }
      : {}),
  };
  try {
    const checkout = await adyenCheckout(context.testMode, ADYEN_PAYMENT_TIMEOUT_MS);
    const response = await checkout.PaymentsApi.payments(body, { idempotencyKey: `${request.reference}:payment` });
    const stored = storedMethodId(response.additionalData);
    const outcome = adyenOutcome(response);
    return {
      outcome,
      maskedInformation: { ...masked, ...maskedFromResponse(response) },
      // An unknown outcome is resolved by our reference (outcomeOf: a cancel by reference after
      // CANCEL_UNKNOWN_AFTER_SECONDS, and the notifications), as an answer that never came.
      ...(response.pspReference && !isUnknown(outcome) ? { providerReference: response.pspReference } : {}),
      ...(shopper ? { providerCustomer: shopper } : {}),
      ...(shopper && stored ? { instrumentToken: adyenInstrumentToken(shopper, stored) } : {}),
    };
  } catch (thrown) {
    const error = asCallError(thrown);
    switch (error.kind) {
      case 'invalid':
        throw ValidationError.field('payment_information', 'error.validation.not_valid', `Adyen: ${error.message}`);
      case 'refused':
        // Adyen checks the key and the merchant account before anything: nothing was charged.
        refusedAccess(error, context);
        return { outcome: { status: 'failed', reason: 'provider_unavailable' }, maskedInformation: masked };
      case 'not_reached':
        throw new ProviderNotReachedError('adyen', 'connection_refused', { cause: error });
      case 'rate_limited':
        throw new ProviderNotReachedError('adyen', 'rate_limited', {
          cause: error,
          ...(error.retryAfter ? { retryAfter: error.retryAfter } : {}),
        });
      default:
        // The outcome is unknown: the payment waits, resolved at Adyen (its notification, or a cancel).
        return {
          outcome: { status: 'pending', reason: 'provider_unavailable' },
          maskedInformation: masked,
          ...(shopper ? { providerCustomer: shopper } : {}),
        };
    }
  }
}

/**
 * A recurring charge of a saved instrument without the donor: `shopperInteraction: ContAuth`
 * with `recurringProcessingModel: Subscription` and the stored method's id
 * (https://docs.adyen.com/online-payments/tokenization/create-and-use-tokens/#make-subsequent-payments).
 * A retry sends the very same request under the same key: Adyen answers the first try's payment
 * (it keeps keys at least 7 days; a charge attempt is retried within hours).
 */
async function chargeInstrument(
  token: string,
  amount: Parameters<PaymentProvider['chargeInstrument']>[1],
  reference: string,
  context: ProviderContext | undefined,
  firstTried?: number,
): Promise<FoundOutcome> {
  if (!context) throw new Error('An Adyen charge needs the profile it is made under');
  const { shopperReference: shopper, storedPaymentMethodId } = parseInstrument(token);
  const method = (context.profile.payment_method as PaymentMethod) ?? 'card';
  // Outside the call's try: an amount Adyen cannot take is no unknown outcome at Adyen.
  const adyenAmount = amountOf(amount);
  try {
    const checkout = await adyenCheckout(context.testMode, ADYEN_PAYMENT_TIMEOUT_MS);
    const response = await checkout.PaymentsApi.payments(
      {
        merchantAccount: merchantAccount(context),
        amount: adyenAmount,
        captureDelayHours: CAPTURE_DELAY_HOURS,
        reference,
        paymentMethod: { type: ADYEN_TYPE[method], storedPaymentMethodId } as AdyenMethod,
        shopperReference: shopper,
        shopperInteraction: 'ContAuth' as AdyenPaymentRequest['shopperInteraction'],
        recurringProcessingModel: 'Subscription' as AdyenPaymentRequest['recurringProcessingModel'],
        // Required by the API's schema even when no donor is sent anywhere (ContAuth never redirects).
        returnUrl: `${process.env.SVC_PUBLIC_URL ?? 'https://localhost'}/providers/adyen/return/none`,
      },
      { idempotencyKey: `${reference}:payment` },
    );
    const outcome = adyenOutcome(response);
    const providerReference = response.pspReference ? { providerReference: response.pspReference } : {};
    // Off session nobody can follow a redirect: a charge that needs the donor has failed.
    if (outcome.status === 'pending' && 'action' in outcome)
      return { status: 'failed', reason: 'authentication_required', ...providerReference };
    return { ...outcome, ...providerReference };
  } catch (thrown) {
    const error = asCallError(thrown);
    if (error.kind === 'invalid') return { status: 'failed', reason: 'payment_source_unavailable' };
    if (error.kind === 'refused') {
      refusedAccess(error, context);
      // A retry refused cannot see whether its first try charged: still unknown.
      if (firstTried === undefined) return { status: 'failed', reason: 'provider_unavailable' };
    }
    // Unknown (or not processed): the attempt stays pending and is sent again under the same key.
    throw new AdyenUnavailableError(error);
  }
}

/**
 * A refund by the payment's pspReference. Adyen answers `received` and decides later: its
 * notification settles it (https://docs.adyen.com/online-payments/refund/). The refund's reference
 * names our payment and refund (`<payment uuid>:<refund uuid>`, 73 of Adyen's 80 characters), so
 * its notification finds both. A retry re-sends under the same key and gets the first answer.
 *
 * A refund before capture is a cancel. Adyen refunds only what it captured ("Payments which have
 * been authorised, but not captured, cannot be refunded, use the /cancel method instead",
 * API explorer, Payment v50 /refund), and when a capture we asked for at once (captureDelayHours 0)
 * has gone through is not documented (unknowable here). So a refund of the whole payment is a
 * reversal (`POST /payments/{pspReference}/reversals`): "If the payment has not been captured, it
 * cancels the payment. If the payment has been captured, it refunds the payment"; "the reversed
 * amount is always the full payment amount"; its outcome is a CANCEL_OR_REFUND notification
 * (https://docs.adyen.com/online-payments/reversal). Either way the donor keeps the money, so
 * either is the refund succeeding. A part of a payment Adyen has not captured yet cannot be given
 * back: Adyen fails that refund (REFUND, success "false", "Transaction hasn't been captured, refund
 * not possible" in the REFUND example of its Webhooks v1 description), recorded as failed with its reason
 * and its amount free again, and it can be asked again once the capture is through.
 */
async function refund(
  reference: string,
  amount: Parameters<PaymentProvider['refund']>[1],
  payment: PaymentAtProvider | undefined,
): Promise<RefundOutcome> {
  if (!payment?.providerReference) return { status: 'failed', reason: 'no_provider_payment' };
  const adyenAmount = amountOf(amount);
  const whole = payment.amount !== undefined && payment.amount.minor === amount.minor;
  try {
    const checkout = await adyenCheckout(payment.context.testMode);
    const modification = {
      merchantAccount: merchantAccount(payment.context),
      reference: refundReference(payment.paymentUuid, reference),
    };
    if (whole) {
      await checkout.ModificationsApi.refundOrCancelPayment(payment.providerReference, modification, {
        idempotencyKey: `${reference}:reversal`,
      });
    } else {
      await checkout.ModificationsApi.refundCapturedPayment(
        payment.providerReference,
        { ...modification, amount: adyenAmount },
        { idempotencyKey: `${reference}:refund` },
      );
    }
    return { status: 'pending' };
  } catch (thrown) {
    const error = asCallError(thrown);
    if (error.kind === 'invalid') return { status: 'failed', reason: 'refund_refused' };
    if (error.kind === 'refused') refusedAccess(error, payment.context);
    throw new AdyenUnavailableError(error);
  }
}

/** The reference of a refund at Adyen: our payment's uuid and the refund's. */
export function refundReference(paymentUuid: string | undefined, refundUuid: string): string {
  return paymentUuid ? `${paymentUuid}:${refundUuid}` : refundUuid;
}

/**
 * Cancels a payment: by its pspReference when Adyen gave one, else by our reference (a payment
 * whose answer never came). Adyen answers `received`; the CANCELLATION (or TECHNICAL_CANCEL)
 * notification says whether it was cancelled.
 */
async function cancel(reference: string, payment?: PaymentAtProvider): Promise<void> {
  if (!payment) return;
  try {
    const checkout = await adyenCheckout(payment.context.testMode);
    const account = merchantAccount(payment.context);
    if (payment.providerReference) {
      await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(
        payment.providerReference,
        { merchantAccount: account, reference },
        { idempotencyKey: `${reference}:cancel` },
      );
    } else {
      // Its own key: a cancel by pspReference of the same payment is another request (Adyen
      // refuses one key with two bodies, errorCode 704).
      await checkout.ModificationsApi.cancelAuthorisedPayment(
        { merchantAccount: account, paymentReference: reference, reference },
        { idempotencyKey: `${reference}:cancel-by-reference` },
      );
    }
  } catch (thrown) {
    const error = asCallError(thrown);
    if (error.kind === 'invalid')
      throw ValidationError.field(
        'status',
        'error.payment.not_cancellable',
        `Adyen did not cancel this payment: ${error.message}`,
      );
    if (error.kind === 'refused') refusedAccess(error, payment.context);
    throw new AdyenUnavailableError(error);
  }
}

/**
 * Where a payment stands at Adyen, as far as can be asked: Adyen's API reads no payment back, so
 * a pending payment waits for its notification (or the donor's return). One whose answer never
 * came is cancelled by our reference once CANCEL_UNKNOWN_AFTER_SECONDS have passed (the same
 * idempotency key each time, so repeated checks repeat nothing): its TECHNICAL_CANCEL notification
 * then fails the payment when the cancel took (nothing can be charged under it any more), and
 * when it did not (the payment was authorised and captured already) the payment's AUTHORISATION
 * notification records the money. Only after GIVE_UP_UNKNOWN_SECONDS without either is it failed
 * (`absent`); a success notification that still comes is recorded and alarmed.
 */
async function outcomeOf(reference: string, payment: PaymentAtProvider): Promise<FoundOutcome> {
  if (payment.action) return { status: 'pending', action: payment.action };
  if (payment.providerReference) return { status: 'pending', reason: 'processing' };
  const age = now() - (payment.created ?? now());
  if (age < CANCEL_UNKNOWN_AFTER_SECONDS) return { status: 'pending', reason: 'provider_unavailable' };
  await cancel(reference, { ...payment, providerReference: undefined });
  return {
    status: 'pending',
    reason: 'provider_unavailable',
    ...(age >= GIVE_UP_UNKNOWN_SECONDS ? { absent: true } : {}),
  };
}

/**
 * The idempotency key of a `/payments/details` call: one per redirectResult (a digest of it), so a
 * retry of the same return replays Adyen's first answer, while a forged or wrong redirectResult
 * submitted first does not occupy the key the donor's real one needs (Adyen answers another body
 * under a used key with an error, never the second request's result,
 * https://docs.adyen.com/development-resources/api-idempotency/). 36 + 9 + 16 characters, within
 * the key's 64.
 */
export function detailsIdempotencyKey(reference: string, redirectResult: string): string {
  const digest = createHash('sha256').update(redirectResult).digest('base64url').slice(0, 16);
  return `${reference}:details:${digest}`;
}

/** A redirectResult whose answer is not this payment's: nothing changes. */
function notThisPayment(): never {
  throw ValidationError.field(
    'redirectResult',
    'error.validation.not_valid',
    'This redirectResult is not of this payment',
  );
}

/**
 * What Adyen says of a redirect the donor came back from (`/payments/details` with `redirectResult`).
 * The answer is applied only when it names this payment: a redirectResult is a bearer value the
 * donor's browser carries, and one of another payment (the donor's own cheaper one, say) would
 * otherwise settle this one with that payment's result. Adyen's answer names the payment by
 * `merchantReference`, "the reference used during the /payments request", and by `pspReference`
 * (Checkout v72 PaymentDetailsResponse); either, where we can compare it, must be ours, and one of
 * them must be there to compare.
 */
export async function adyenDetails(
  context: ProviderContext,
  redirectResult: string,
  reference: string,
  knownPspReference?: string,
): Promise<FoundOutcome> {
  let response: Awaited<ReturnType<CheckoutAPI['PaymentsApi']['paymentsDetails']>>;
  try {
    const checkout = await adyenCheckout(context.testMode, ADYEN_PAYMENT_TIMEOUT_MS);
    response = await checkout.PaymentsApi.paymentsDetails(
      { details: { redirectResult } },
      { idempotencyKey: detailsIdempotencyKey(reference, redirectResult) },
    );
  } catch (thrown) {
    const error = asCallError(thrown);
    // A redirectResult Adyen does not take (forged, used, or expired): nothing changes.
    if (error.kind === 'invalid')
      throw ValidationError.field('redirectResult', 'error.validation.not_valid', `Adyen: ${error.message}`);
    throw new AdyenUnavailableError(error);
  }
  const named = response.merchantReference;
  const psp = response.pspReference;
  const comparable = named !== undefined || (psp !== undefined && knownPspReference !== undefined);
  if (
    !comparable ||
    (named !== undefined && named !== reference) ||
    (psp !== undefined && knownPspReference !== undefined && psp !== knownPspReference)
  ) {
    logger.warn('An Adyen redirectResult answered for another payment was refused', {
      payment: reference,
      named,
      psp,
    });
    notThisPayment();
  }
  const stored = storedMethodId(response.additionalData);
  const shopper =
    response.additionalData?.['tokenization.shopperReference'] ??
    response.additionalData?.['recurring.shopperReference'];
  return {
    ...adyenOutcome(response as AdyenPaymentResponse),
    ...(psp ? { providerReference: psp } : {}),
    ...(stored && shopper ? { instrumentToken: adyenInstrumentToken(shopper, stored) } : {}),
  };
}

export const adyenProvider: PaymentProvider & Required<Pick<PaymentProvider, 'outcomeOf'>> = {
  name: 'adyen',
  methods: ['card', 'twint', 'sepa_dd'],

  async unusableFor(context, method, saving) {
    if (!context.profile.merchant_account) return 'An Adyen profile names its merchant_account';
    // Adyen stores cards and SEPA mandates for Subscription payments; TWINT is not stored here.
    if (saving && method === 'twint') return 'Adyen payments here cannot save TWINT for later charges';
    return adyenUnusable(context.testMode);
  },

  authorise,
  chargeInstrument,

  async completeApproval() {
    throw new Error('Adyen payments are approved on Adyen’s pages, not the simulated one');
  },

  refund,
  cancel,
  outcomeOf,
  // "Cancel without a PSP reference" (https://docs.adyen.com/online-payments/cancel/#cancel-without-psp-reference).
  cancelsByReference: true,
};
