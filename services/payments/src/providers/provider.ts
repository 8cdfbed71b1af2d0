import type { Money } from '@svc/core';

/**
 * What the payments domain needs from a payment service provider. Each provider is a folder
 * beside this file (`simulated`, `stripe`) registered in registry.ts, and is chosen per account
 * through its payment method profiles; the domain never changes for a new one.
 *
 * Every call carries our idempotency reference (the uuid of the payment, refund, source or
 * charge attempt): a provider must treat a repeated reference as the same request, so a re-run
 * never charges twice.
 */
/** The payment methods the service takes: every provider names those it serves (`methods`). */
export const PAYMENT_METHODS = ['card', 'twint', 'sepa_dd'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export interface RedirectAction {
  action_type: 'redirect';
  url: string;
}

/** The account's profile as the provider needs it, and which of its keys to use. */
export interface ProviderContext {
  profile: {
    name: string;
    payment_method: string;
    provider: string;
    stripe_account?: string | undefined;
    /** The Adyen merchant account the payment is made on. */
    merchant_account?: string | undefined;
    raw_card_data?: boolean | undefined;
    /** A platform fee on Connect charges: basis points of the amount, plus a fixed part in minor units. */
    platform_fee_basis_points?: number | undefined;
    platform_fee_fixed?: number | undefined;
    /** Appended to the account's statement descriptor on the donor's card statement. */
    statement_descriptor_suffix?: string | undefined;
  };
  testMode: boolean;
}

/** What the payment knows of its donor (the linked supporter), for providers that need it (SEPA). */
export interface DonorDetails {
  supporterUuid?: string | undefined;
  email?: string | undefined;
  name?: string | undefined;
  address?: { line1?: string; postalCode?: string; city?: string; country?: string } | undefined;
}

export interface AuthoriseRequest {
  /** Our payment's (or source's) uuid: the provider's idempotency reference. */
  reference: string;
  method: PaymentMethod;
  amount: Money;
  /** As the client sent it; the provider validates it for its method. */
  paymentInformation: unknown;
  /** Where the provider's own pages send the donor to approve (3-D Secure, TWINT). */
  approvalUrl: string;
  context: ProviderContext;
  /** Whether the instrument is kept for later charges (a payment source). */
  saveInstrument: boolean;
  /**
   * No payment is asked for, only a saved instrument (`POST /payment-sources`): the provider
   * sets the instrument up for later charges without charging anything.
   */
  sourceOnly?: boolean;
  /** Our identifiers, for the provider's records (Stripe metadata). */
  metadata: Record<string, string>;
  donor?: DonorDetails;
}

export type Outcome =
  | { status: 'succeeded' }
  | { status: 'failed'; reason: string }
  | { status: 'pending'; action: RedirectAction }
  /** The provider is working on it (a SEPA debit for days) or its answer is not known yet. */
  | { status: 'pending'; reason: 'processing' | 'provider_unavailable' };

export interface Authorisation {
  outcome: Outcome;
  /** Safe to store and show: never a card number or CVV. */
  maskedInformation: Record<string, unknown>;
  /** The reusable instrument, if the method can be charged again. */
  instrumentToken?: string;
  /** The provider's own id of the payment (a Stripe PaymentIntent), for later calls. */
  providerReference?: string;
  /** The provider's customer the payment was made for (a Stripe Customer), to find it again. */
  providerCustomer?: string;
}

/** What a later call about a payment needs besides our reference. */
export interface PaymentAtProvider {
  context: ProviderContext;
  /** What the donor was asked to do, while the payment waits on them (3-D Secure, TWINT). */
  action?: RedirectAction | undefined;
  providerReference?: string | undefined;
  /** Our payment's uuid (a refund's metadata names it, for the provider's later events). */
  paymentUuid?: string | undefined;
  /** When we asked the provider (service time): where a lost creation is looked for. */
  created?: number | undefined;
  /** The provider's customer the payment was made for, if any. */
  providerCustomer?: string | undefined;
  /**
   * The payment's whole amount, given with a refund: a refund of all of it may be made whether or
   * not the provider has captured the payment yet (Adyen's reversal cancels or refunds).
   */
  amount?: Money | undefined;
}

/**
 * Where a payment stands at the provider. `absent`: the provider's own consistent records show
 * no payment of ours (never said on a mere lack of answer).
 */
export type FoundOutcome = Outcome & { providerReference?: string; instrumentToken?: string; absent?: true };

export type RefundOutcome = { status: 'succeeded' } | { status: 'pending' } | { status: 'failed'; reason: string };

export interface PaymentProvider {
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  /**
   * Why this provider cannot take payments under the profile (a missing key, an unsupported
   * method or currency, a method it cannot save for later charges), or undefined when it can.
   */
  unusableFor?(context: ProviderContext, method: PaymentMethod, saving: boolean): Promise<string | undefined>;
  /** Charges a new instrument (card details, an IBAN mandate, a TWINT approval). */
  authorise(request: AuthoriseRequest): Promise<Authorisation>;
  /**
   * Charges a saved instrument (recurring payments), without the donor present. `firstTried`:
   * when this charge was first asked for (service time), if this is a retry: the provider looks
   * for the first try's charge before it charges.
   */
  chargeInstrument(
    instrumentToken: string,
    amount: Money,
    reference: string,
    context?: ProviderContext,
    firstTried?: number,
  ): Promise<Outcome & { providerReference?: string }>;
  /** Settles a pending authorisation after the donor's decision on the provider's page. */
  completeApproval(instrumentToken: string | undefined, approved: boolean): Promise<Outcome>;
  /**
   * Where a payment stands at the provider now (its return, its events, or an answer that never
   * came); `provider_unavailable` while the provider cannot tell. Providers that always answer at
   * once (the simulated one) need none.
   */
  outcomeOf?(reference: string, payment: PaymentAtProvider): Promise<FoundOutcome>;
  /** Where a pending payment source's set-up stands (the donor's 3-D Secure or TWINT approval). */
  sourceOutcomeOf?(source: PaymentAtProvider): Promise<Outcome & { instrumentToken?: string }>;
  /** Gives up a set-up the donor never finished (nothing was charged); its final outcome. */
  abandonSource?(reference: string, source: PaymentAtProvider): Promise<Outcome & { instrumentToken?: string }>;
  /**
   * Refunds part or all of a payment. `firstTried`: when this refund was first asked for, if this
   * is a retry of one the provider did not answer: it is looked for before it is asked again.
   */
  refund(reference: string, amount: Money, payment?: PaymentAtProvider, firstTried?: number): Promise<RefundOutcome>;
  cancel(reference: string, payment?: PaymentAtProvider): Promise<void>;
  /**
   * The provider cancels a payment by our own reference, also one it gave no id for yet (a
   * redirect the donor never finished), and reads nothing back: a cancel it accepted is the last
   * word we get before its notification. A donor abandoned payment is then failed at once
   * (`approval_expired`); money the provider reports later is still recorded, and alarmed.
   */
  cancelsByReference?: true;
}

/**
 * Why a call provably never reached the provider, or reached it and was refused before anything
 * was done: the only failures after which a payment may be sent to another provider.
 */
export type NotReachedReason = 'connection_refused' | 'rate_limited' | 'circuit_open' | 'limit_reached';

/**
 * Thrown by `authorise` when the provider provably did nothing: the connection was refused or the
 * name did not resolve (no request was sent), or it answered 429 (a request over its rate limit is
 * not processed). Anything else that is not an answer (a timeout, a cut connection, a 5xx) is an
 * unknown outcome and is never thrown as this.
 */
export class ProviderNotReachedError extends Error {
  readonly provider: string;
  readonly reason: NotReachedReason;
  /** Seconds the provider asked us to wait (429 `Retry-After`), if it said. */
  readonly retryAfter: number | undefined;
  constructor(provider: string, reason: NotReachedReason, options: { cause?: unknown; retryAfter?: number } = {}) {
    super(`${provider} was not reached: ${reason}`, { cause: options.cause });
    this.name = 'ProviderNotReachedError';
    this.provider = provider;
    this.reason = reason;
    this.retryAfter = options.retryAfter;
  }
}
