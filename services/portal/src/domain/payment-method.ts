import { randomInt, timingSafeEqual } from 'node:crypto';
import { ConflictError, keyedHash, now, type Principal, TooManyRequestsError, ValidationError } from '@svc/core';
import { enqueueMail, mailOutboxWrite } from '@svc/mail';
import { createPaymentSource, findPaymentSource, paymentRequestSchema } from '@svc/payments';
import { readSubscriptionAs, type SubscriptionShape, shapedSubscription, usePaymentSource } from '@svc/subscriptions';
import { getSupporter } from '@svc/supporters';
import { transactWrite } from '@svc/table';
import * as z from 'zod';
import { markCodeUsed, newCodeWrite, reserveGuess } from '../repository/code-repository';
import type { PortalLocale } from '../repository/link-repository';
import { brandOf } from './brand';
import type { PortalDonor } from './manage';

/**
 * Changing the payment method (contract section 12): the donor first asks for a one-time code,
 * mailed to the supporter's address, then sends it with the new method. The new source is made
 * exactly as `POST /payment-sources` makes one (Stripe: a SetupIntent; Adyen: a zero-value
 * authorisation; SEPA: a new mandate), scoped to the subscription's account; the subscription
 * keeps its current source until the new one is active (usePaymentSource).
 */

/** Six digits, valid 10 minutes, 5 guesses, one mail a minute at most. */
export const CODE_DIGITS = 6;
export const CODE_LIFETIME_SECONDS = 10 * 60;
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_MIN_GAP_SECONDS = 60;

const codeHash = (supporterUuid: string, code: string) => keyedHash('portal_code', `${supporterUuid}:${code}`);

/** Mails a new one-time code to the supporter (replacing any earlier one). 429 within a minute of the last. */
export async function sendCode(donor: PortalDonor, locale: PortalLocale): Promise<{ expires_at: number }> {
  const brand = await brandOf(donor.organisation_uuid);
  if (!brand?.settings.enabled) {
    throw new ConflictError('The organisation’s donor portal is not enabled', 'error.portal.disabled', 'enabled');
  }
  if (!brand.settings.features.payment_method) {
    throw new ConflictError(
      'The organisation does not let donors change the payment method',
      'error.portal.feature_disabled',
      'payment_method',
    );
  }
  const supporter = await getSupporter(Promise.resolve(donorScope(donor)), donor.supporter_uuid);
  const email = typeof supporter.email === 'string' ? supporter.email.trim() : '';
  if (!email) throw ValidationError.field('email', 'error.portal.no_email', 'The supporter has no e-mail address');
  const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
  const created = now();
  const expires = created + CODE_LIFETIME_SECONDS;
  const mailId = `portal_code:${donor.supporter_uuid}:${created}`;
  await transactWrite([
    {
      item: newCodeWrite(
        {
          supporter_uuid: donor.supporter_uuid,
          organisation_uuid: donor.organisation_uuid,
          code_hash: await codeHash(donor.supporter_uuid, code),
          created,
          expires_at: expires,
          attempts: 0,
        },
        CODE_MIN_GAP_SECONDS,
      ),
      onConditionFailed: () =>
        new TooManyRequestsError(
          'A code was sent less than a minute ago; use it or wait a minute',
          CODE_MIN_GAP_SECONDS,
        ),
    },
    {
      item: mailOutboxWrite({
        id: mailId,
        to: email,
        locale,
        template: 'portal_code',
        data: { organisation_name: brand.name, code, expires_at: expires },
      }),
    },
  ]);
  await enqueueMail(mailId);
  return { expires_at: expires };
}

/** Spends one guess on the code; true when it matched (and is now used). Counted before compared. */
async function useCode(donor: PortalDonor, code: string): Promise<boolean> {
  const at = now();
  const reserved = await reserveGuess(donor.supporter_uuid, at, CODE_MAX_ATTEMPTS);
  if (!reserved || reserved.organisation_uuid !== donor.organisation_uuid) return false;
  const hash = await codeHash(donor.supporter_uuid, code);
  const same = timingSafeEqual(
    Buffer.from(hash),
    Buffer.from(reserved.code_hash.padEnd(hash.length).slice(0, hash.length)),
  );
  return same && (await markCodeUsed(donor.supporter_uuid, hash, at));
}

export const paymentMethodInput = z.strictObject({
  code: z.string().regex(/^[0-9]{6}$/, 'The six digits of the code we mailed'),
  payment_method: z.string().max(40),
  /** As `POST /payment-sources` takes it for this method (card fields, an IBAN, a provider token…). */
  payment_information: z.record(z.string(), z.unknown()).optional(),
  /** The profile to set the method up with; by default the current source's. */
  profile: z.string().max(100).optional(),
});
export type PaymentMethodInput = z.infer<typeof paymentMethodInput>;

export interface PaymentMethodChange {
  subscription: SubscriptionShape;
  /** The new source's state: `active` (used from the next charge) or `pending` (the donor must approve it). */
  status: 'active' | 'pending';
  /** Where to send the donor to approve it (3-D Secure, a bank), while pending. */
  redirect_url?: string;
}

/** The donor's scope as an API caller: a grant on their organisation alone. */
function donorScope(donor: PortalDonor): Principal {
  return {
    clientId: `portal:${donor.supporter_uuid}`,
    role: 'customer',
    kind: 'client',
    grants: [{ organisation_uuid: donor.organisation_uuid }],
  };
}

/**
 * Sets up a new payment method for the subscription, after the one-time code: 400
 * error.portal.code_invalid for a wrong, used, expired or exhausted code (one answer for all,
 * so none is told apart). The code is spent by the attempt; a method the provider declines
 * needs a fresh code.
 */
export async function changePaymentMethod(
  donor: PortalDonor,
  subscriptionUuid: string,
  input: PaymentMethodInput,
  baseUrl: string,
  returnUrl: string,
): Promise<PaymentMethodChange> {
  const brand = await brandOf(donor.organisation_uuid);
  if (!brand?.settings.enabled) {
    throw new ConflictError('The organisation’s donor portal is not enabled', 'error.portal.disabled', 'enabled');
  }
  if (!brand.settings.features.payment_method) {
    throw new ConflictError(
      'The organisation does not let donors change the payment method',
      'error.portal.feature_disabled',
      'payment_method',
    );
  }
  const subscription = await readSubscriptionAs(donor, subscriptionUuid);
  const current = await findPaymentSource(subscription.payment_source_uuid);
  // The request is checked whole before the code is spent: bad input costs no guess.
  const request = paymentRequestSchema.parse({
    account_uuid: subscription.account_uuid,
    payment_method: input.payment_method,
    profile: input.profile ?? current?.profile ?? '',
    amount: { value: subscription.amount, currency: subscription.currency },
    ...(input.payment_information ? { payment_information: input.payment_information } : {}),
    return_url: returnUrl,
    test_mode: subscription.test_mode,
    custom_parameters: { portal_subscription_uuid: subscription.uuid },
  });
  if (!(await useCode(donor, input.code))) {
    throw ValidationError.field(
      'code',
      'error.portal.code_invalid',
      'This code is wrong, used or expired; ask for a new one',
    );
  }
  const source = await createPaymentSource(Promise.resolve(donorScope(donor)), request, baseUrl);
  if (source.status === 'failed') {
    throw ValidationError.field(
      'payment_information',
      'error.portal.payment_method_declined',
      source.status_reason ?? 'The provider declined this payment method',
    );
  }
  const changed = await usePaymentSource(donor, subscription.uuid, source.uuid);
  return {
    subscription: await shapedSubscription(changed),
    status: source.status === 'active' ? 'active' : 'pending',
    ...(source.status === 'pending' && source.action ? { redirect_url: source.action.url } : {}),
  };
}

/** When the donor comes back (or opens the portal): a pending source that is now active is used. */
export async function settlePendingMethod(donor: PortalDonor, subscriptionUuid: string): Promise<SubscriptionShape> {
  const subscription = await readSubscriptionAs(donor, subscriptionUuid);
  if (!subscription.pending_source_uuid) return shapedSubscription(subscription);
  return shapedSubscription(await usePaymentSource(donor, subscription.uuid, subscription.pending_source_uuid));
}
