import { describe, expect, it } from 'vitest';
import {
  classifyError,
  declineReason,
  intentOutcome,
  maskedPaymentMethod,
  refundOutcome,
  setupOutcome,
} from './stripe-mapping';

const intent = (status: string, extra: Record<string, unknown> = {}) =>
  ({ status, next_action: null, last_payment_error: null, ...extra }) as Parameters<typeof intentOutcome>[0];

describe('a PaymentIntent status in our terms', () => {
  it.each([
    ['succeeded', { status: 'succeeded' }],
    ['processing', { status: 'pending', reason: 'processing' }],
    ['requires_confirmation', { status: 'pending', reason: 'processing' }],
    ['requires_capture', { status: 'pending', reason: 'processing' }],
    ['canceled', { status: 'failed', reason: 'cancelled' }],
    ['requires_payment_method', { status: 'failed', reason: 'declined' }],
    ['requires_action', { status: 'failed', reason: 'authentication_required' }],
  ])('%s', (status, outcome) => {
    expect(intentOutcome(intent(status))).toEqual(outcome);
  });

  it('requires_action with a redirect is pending with that redirect', () => {
    const url = 'https://hooks.stripe.com/3d_secure_2/authenticate/xyz';
    expect(
      intentOutcome(intent('requires_action', { next_action: { type: 'redirect_to_url', redirect_to_url: { url } } })),
    ).toEqual({
      status: 'pending',
      action: { action_type: 'redirect', url },
    });
  });

  it('requires_payment_method after a failed attempt carries that attempt’s reason', () => {
    const failed = intent('requires_payment_method', {
      last_payment_error: { code: 'card_declined', decline_code: 'lost_card' },
    });
    expect(intentOutcome(failed)).toEqual({ status: 'failed', reason: 'lost_card' });
  });
});

describe('a SetupIntent status in our terms (a saved SEPA mandate)', () => {
  const setup = (status: string, extra: Record<string, unknown> = {}) =>
    ({ status, next_action: null, last_setup_error: null, ...extra }) as Parameters<typeof setupOutcome>[0];
  it.each([
    ['succeeded', { status: 'succeeded' }],
    ['processing', { status: 'pending', reason: 'processing' }],
    ['requires_confirmation', { status: 'pending', reason: 'processing' }],
    ['canceled', { status: 'failed', reason: 'cancelled' }],
    ['requires_payment_method', { status: 'failed', reason: 'declined' }],
    ['requires_action', { status: 'failed', reason: 'authentication_required' }],
  ])('%s', (status, outcome) => {
    expect(setupOutcome(setup(status))).toEqual(outcome);
  });

  it('a failed setup carries its reason', () => {
    expect(
      setupOutcome(setup('requires_payment_method', { last_setup_error: { code: 'invalid_bank_account_iban' } })),
    ).toEqual({
      status: 'failed',
      reason: 'invalid_bank_account_iban',
    });
  });
});

describe('decline reasons', () => {
  it.each([
    [{ code: 'card_declined', decline_code: 'insufficient_funds' }, 'insufficient_funds'],
    [{ code: 'card_declined', decline_code: 'lost_card' }, 'lost_card'],
    [{ code: 'card_declined', decline_code: 'stolen_card' }, 'stolen_card'],
    [{ code: 'card_declined', decline_code: 'do_not_honor' }, 'do_not_honor'],
    [{ code: 'card_declined', decline_code: 'generic_decline' }, 'card_declined'],
    [{ code: 'expired_card' }, 'expired_card'],
    [{ code: 'incorrect_cvc' }, 'incorrect_cvc'],
    [{ code: 'authentication_required', decline_code: 'authentication_required' }, 'authentication_required'],
    [{ code: 'payment_intent_authentication_failure' }, 'payment_intent_authentication_failure'],
    [{ code: 'debit_not_authorized' }, 'debit_not_authorized'],
    [{}, 'declined'],
    [null, 'declined'],
  ])('%j → %s', (error, reason) => {
    expect(declineReason(error)).toBe(reason);
  });
});

describe('SDK errors', () => {
  it('card errors are declines with the intent', () => {
    const pi = { id: 'pi_1' };
    expect(
      classifyError({ type: 'StripeCardError', code: 'card_declined', decline_code: 'fraudulent', payment_intent: pi }),
    ).toEqual({
      kind: 'declined',
      reason: 'fraudulent',
      intent: pi,
    });
  });

  it('invalid requests name their parameter; an idempotency conflict is ours, not the client’s', () => {
    expect(
      classifyError({ type: 'StripeInvalidRequestError', param: 'payment_method', message: 'No such PaymentMethod' }),
    ).toEqual({
      kind: 'invalid',
      param: 'payment_method',
      message: 'No such PaymentMethod',
    });
    expect(
      classifyError({ type: 'StripeInvalidRequestError', code: 'idempotency_key_in_use', message: 'busy' }).kind,
    ).toBe('unknown');
    expect(classifyError({ type: 'StripeIdempotencyError', message: 'reused' }).kind).toBe('unknown');
  });

  it.each(['StripeConnectionError', 'StripeAPIError', 'StripeRateLimitError', undefined])(
    '%s leaves the outcome unknown',
    (type) => {
      expect(classifyError({ type, message: 'x' }).kind).toBe('unknown');
    },
  );

  // Stripe authenticates before it processes anything: a refused key or account did nothing.
  it.each([
    [{ type: 'StripeAuthenticationError', message: 'Invalid API Key provided: sk_test_****' }],
    [{ type: 'StripePermissionError', message: "The provided key does not have access to account 'acct_1'" }],
    [{ type: 'StripeInvalidRequestError', code: 'account_invalid', message: 'x' }],
  ])('%o is a refusal of our credentials, not an unknown outcome', (error) => {
    expect(classifyError(error).kind).toBe('refused');
  });
});

describe('refunds', () => {
  it.each([
    ['succeeded', { status: 'succeeded' }],
    ['pending', { status: 'pending' }],
    ['requires_action', { status: 'pending' }],
    ['failed', { status: 'failed', reason: 'lost_or_stolen_card' }],
    ['canceled', { status: 'failed', reason: 'lost_or_stolen_card' }],
  ])('%s', (status, outcome) => {
    expect(
      refundOutcome({ status, failure_reason: 'lost_or_stolen_card' } as Parameters<typeof refundOutcome>[0]),
    ).toEqual(outcome);
  });
});

describe('masked payment methods', () => {
  it('shows a card by brand, last four, expiry and fingerprint only', () => {
    const masked = maskedPaymentMethod({
      id: 'pm_1',
      card: { brand: 'visa', last4: '4242', exp_month: 4, exp_year: 2030, fingerprint: 'fp' },
      billing_details: { name: 'Ada' },
    } as never);
    expect(masked).toEqual({
      brand: 'visa',
      last4: '4242',
      expiry_month: 4,
      expiry_year: 2030,
      cardholder: 'Ada',
      fingerprint: 'fp',
    });
  });

  it('shows nothing of an unexpanded method', () => {
    expect(maskedPaymentMethod('pm_1')).toEqual({});
    expect(maskedPaymentMethod(null)).toEqual({});
  });
});
