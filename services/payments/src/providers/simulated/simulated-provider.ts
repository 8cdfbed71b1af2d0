import { definedFields, derivedToken, parseOrThrow, ValidationError } from '@svc/core';
import * as z from 'zod';
import { brandOf, cardFingerprint, isExpired, passesLuhn, rawCardSchema } from '../card-rules';
import { isValidIban, maskIban, normaliseIban } from '../iban';
import type { Authorisation, AuthoriseRequest, Outcome, PaymentProvider } from '../provider';
import { PAYMENT_METHODS } from '../provider';

/**
 * The simulated provider: behaves like a PSP's test mode, with the contract's test cards. It
 * keeps no card data: an instrument token carries only how later charges behave. Like a real
 * PSP that deduplicates on its idempotency key, it gives the same answer to the same request
 * under the same reference: its answers follow from the request alone, and an instrument token
 * is derived from the reference under the service's hash key. It moves no money and keeps no
 * state, so a repeated reference is never a second charge.
 */

/** The instrument token of an authorisation: the same for the same reference. */
async function instrumentToken(kind: string, reference: string): Promise<string> {
  return `sim_${kind}_${(await derivedToken('simulated_instrument', reference)).slice(0, 16)}`;
}
const CARD_BEHAVIOUR: Record<string, Outcome | 'decline_later' | '3ds'> = {
  '4000000000000002': { status: 'failed', reason: 'card_declined' },
  '4000000000009995': { status: 'failed', reason: 'insufficient_funds' },
  '4000000000000341': 'decline_later',
  '4000000000003220': '3ds',
};

const sepaSchema = z.object({
  iban: z.string().max(50),
  account_holder: z.string().max(200).optional(),
});

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return parseOrThrow(schema, value ?? {}, 'payment_information');
}

async function authoriseCard(request: AuthoriseRequest): Promise<Authorisation> {
  const card = parse(rawCardSchema, request.paymentInformation);
  if (!passesLuhn(card.number)) {
    throw ValidationError.field(
      'payment_information.number',
      'error.validation.not_valid',
      'This card number is not valid',
    );
  }
  if (isExpired(card.expiry_month, card.expiry_year)) {
    throw ValidationError.field(
      'payment_information.expiry_year',
      'error.validation.not_valid',
      'This card has expired',
    );
  }
  const masked: Record<string, unknown> = {
    brand: card.brand ?? brandOf(card.number),
    last4: card.number.slice(-4),
    expiry_month: card.expiry_month,
    expiry_year: card.expiry_year,
    ...definedFields({ cardholder: card.cardholder }),
    fingerprint: await cardFingerprint(card.number),
  };
  const behaviour = CARD_BEHAVIOUR[card.number];
  const token = (kind: string) => instrumentToken(`card_${kind}`, request.reference);
  if (behaviour === '3ds') {
    return {
      outcome: { status: 'pending', action: { action_type: 'redirect', url: request.approvalUrl } },
      maskedInformation: masked,
      instrumentToken: await token('ok'),
    };
  }
  if (behaviour === 'decline_later') {
    return {
      outcome: { status: 'succeeded' },
      maskedInformation: masked,
      instrumentToken: await token('declinelater'),
    };
  }
  if (behaviour) return { outcome: behaviour, maskedInformation: masked };
  return { outcome: { status: 'succeeded' }, maskedInformation: masked, instrumentToken: await token('ok') };
}

async function authorise(request: AuthoriseRequest): Promise<Authorisation> {
  switch (request.method) {
    case 'card':
      return authoriseCard(request);
    case 'twint':
      return {
        outcome: { status: 'pending', action: { action_type: 'redirect', url: request.approvalUrl } },
        maskedInformation: {},
        instrumentToken: await instrumentToken('twint_ok', request.reference),
      };
    case 'sepa_dd': {
      const sepa = parse(sepaSchema, request.paymentInformation);
      if (!isValidIban(sepa.iban)) {
        throw ValidationError.field('payment_information.iban', 'error.validation.not_valid', 'This IBAN is not valid');
      }
      return {
        outcome: { status: 'succeeded' },
        maskedInformation: {
          iban: maskIban(sepa.iban),
          country_code: normaliseIban(sepa.iban).slice(0, 2),
          ...definedFields({ account_holder: sepa.account_holder }),
        },
        instrumentToken: await instrumentToken('sepa_ok', request.reference),
      };
    }
  }
}

/**
 * Where no money moves, only test payments may pretend it did: with
 * `SVC_SIMULATED_PROVIDER=test-mode-only` (prod's stage config) a live payment on a simulated
 * profile is refused. A deployed function without the setting refuses them too (fail closed);
 * the local runtime takes every payment.
 */
export function simulatedLiveRefusal(testMode: boolean, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (testMode) return undefined;
  const setting = env.SVC_SIMULATED_PROVIDER ?? (env.AWS_LAMBDA_FUNCTION_NAME ? 'test-mode-only' : 'all');
  if (setting === 'all') return undefined;
  return 'The simulated provider takes test_mode payments only here: use a real provider’s profile, or test_mode';
}

export const simulatedProvider: PaymentProvider = {
  name: 'simulated',
  methods: PAYMENT_METHODS,

  async unusableFor(context) {
    return simulatedLiveRefusal(context.testMode);
  },

  authorise,

  async chargeInstrument(instrumentToken) {
    if (instrumentToken.includes('_declinelater_')) return { status: 'failed', reason: 'card_declined' };
    return { status: 'succeeded' };
  },

  async completeApproval(_instrumentToken, approved) {
    return approved ? { status: 'succeeded' } : { status: 'failed', reason: 'declined_by_donor' };
  },

  async refund() {
    return { status: 'succeeded' };
  },

  /**
   * Where a payment stands here. It keeps no state, so the answer follows from the payment: one
   * with its approval page still open waits on the donor (the resolver gives it up when the
   * donor's time is over, as on every provider: cancelled by our reference, failed
   * `approval_expired`), and one whose answer was not heard (the local fault answered in its
   * place) was never made here.
   */
  async outcomeOf(_reference, payment) {
    if (payment.action) return { status: 'pending', action: payment.action };
    return { status: 'failed', reason: 'provider_unavailable' };
  },

  async cancel() {},
  // Nothing of a payment lives here: a cancel is by our reference, and nothing can complete after it.
  cancelsByReference: true,
};
