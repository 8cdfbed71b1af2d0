import { deferred, freeJsonObject, isoExponent, uuidSchema, ValidationError } from '@svc/core';
import * as z from 'zod';
import { PAYMENT_METHODS } from '../providers/provider';

/** Money as the API takes it: a string of digits or a positive integer, in minor units. */
export const moneyInput = deferred(() =>
  z.object({
    value: z.union([
      z.string().regex(/^[1-9][0-9]{0,15}$/, 'A positive whole number of minor units'),
      z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    ]),
    // An active ISO 4217 code with minor units (@svc/core currencies.ts): the value counts them,
    // and each provider's own minor units are derived from them.
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, { message: 'An upper-case ISO 4217 code', abort: true })
      .refine((code) => isoExponent(code) !== undefined, 'An active ISO 4217 currency with minor units'),
  }),
);

/** Money as the API answers it: minor units as a string of digits, and the currency. */
export const moneyOutput = deferred(() =>
  z.object({ value: z.string().describe('Minor units, as a string'), currency: z.string() }),
);

/** The request to initialise a payment and to create a payment source. */
export const paymentRequestSchema = deferred(() =>
  z
    .object({
      account_uuid: uuidSchema,
      payment_method: z.enum(PAYMENT_METHODS),
      profile: z.string().min(1).max(100),
      locale: z.string().min(2).max(10).optional(),
      amount: moneyInput,
      /**
       * The donor covers the profile's fees (contract section 13): the amount charged is the
       * smallest total that leaves `amount` once they are taken. The donor's free choice, never
       * a surcharge the organisation imposes (docs/API.md "Fee cover").
       */
      cover_fees: z.boolean().optional(),
      payment_information: freeJsonObject().optional(),
      create_payment_source: z.boolean().optional(),
      subscription: freeJsonObject().optional(),
      return_url: z
        .url({ protocol: /^https?$/ })
        .max(2000)
        .optional(),
      supporter: freeJsonObject().optional(),
      create_supporter: z.boolean().optional(),
      custom_parameters: freeJsonObject().optional(),
      test_mode: z.boolean().optional(),
    })
    .strict(),
);
export type PaymentRequest = z.infer<typeof paymentRequestSchema>;

export function minorUnits(amount: PaymentRequest['amount']): number {
  return typeof amount.value === 'number' ? amount.value : Number(amount.value);
}

/**
 * Payment sources have no `subscription` (a subscription starts with a payment) and no
 * `cover_fees` (nothing is charged).
 */
export function refuseSourceOnlyFields(request: PaymentRequest): void {
  if (request.cover_fees !== undefined) {
    throw ValidationError.field(
      'cover_fees',
      'error.validation.not_supported',
      'A payment source charges nothing: cover_fees belongs on a payment or a subscription',
    );
  }
  if (request.subscription !== undefined) {
    throw ValidationError.field(
      'subscription',
      'error.validation.not_supported',
      'A subscription starts with a payment (POST /payments with create_payment_source), or from a saved source (POST /subscriptions)',
    );
  }
}

/** A payment that starts a subscription saves the source the subscription charges. */
export function requireSourceForSubscription(request: PaymentRequest): void {
  if (request.subscription !== undefined && request.create_payment_source !== true) {
    throw ValidationError.field(
      'create_payment_source',
      'error.validation.not_valid',
      'A payment with a subscription must set create_payment_source to true',
    );
  }
}
