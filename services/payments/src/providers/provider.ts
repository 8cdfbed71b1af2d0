import type { Money } from '@svc/core';

/**
 * What the payments domain needs from a payment service provider. A real PSP adapter implements
 * this beside the simulated one and is chosen per account through its payment method profiles;
 * the domain never changes.
 */
export type PaymentMethod = 'card' | 'twint' | 'sepa_dd';

export interface RedirectAction {
  action_type: 'redirect';
  url: string;
}

export interface AuthoriseRequest {
  /** Our payment's uuid: the provider's idempotency reference. */
  reference: string;
  method: PaymentMethod;
  amount: Money;
  /** As the client sent it; the provider validates it for its method. */
  paymentInformation: unknown;
  /** Where the provider's own pages send the donor to approve (3-D Secure, TWINT). */
  approvalUrl: string;
}

export type Outcome =
  | { status: 'succeeded' }
  | { status: 'failed'; reason: string }
  | { status: 'pending'; action: RedirectAction };

export interface Authorisation {
  outcome: Outcome;
  /** Safe to store and show: never a card number or CVV. */
  maskedInformation: Record<string, unknown>;
  /** The reusable instrument, if the method can be charged again. */
  instrumentToken?: string;
}

export interface PaymentProvider {
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  /** Charges a new instrument (card details, an IBAN mandate, a TWINT approval). */
  authorise(request: AuthoriseRequest): Promise<Authorisation>;
  /** Charges a saved instrument (recurring payments). */
  chargeInstrument(instrumentToken: string, amount: Money, reference: string): Promise<Outcome>;
  /** Settles a pending authorisation after the donor's decision on the provider's page. */
  completeApproval(instrumentToken: string | undefined, approved: boolean): Promise<Outcome>;
  refund(reference: string, amount: Money): Promise<{ status: 'succeeded' } | { status: 'failed'; reason: string }>;
  cancel(reference: string): Promise<void>;
}
