import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BindingField,
  type BoundRecord,
  bindingMismatches,
  boundToCallback,
  type CallbackClaim,
} from './provider-binding';

const stored: BoundRecord = {
  uuid: '0f6d3c1e-2b4a-4c5d-8e9f-a0b1c2d3e4f5',
  provider: 'adyen',
  provider_account: 'CharityECOM',
  test_mode: true,
  provider_reference: 'PSP0000000000001',
  amount_minor: 2500,
  currency: 'CHF',
};
const exact: CallbackClaim = {
  provider: 'adyen',
  account: 'CharityECOM',
  live: false,
  reference: 'PSP0000000000001',
  amountMinor: 2500,
  currency: 'chf',
};

/** One field of the claim changed so that it no longer names what we stored. */
const wrong: Record<BindingField, (claim: CallbackClaim) => CallbackClaim> = {
  provider: (claim) => ({ ...claim, provider: 'stripe' }),
  account: (claim) => ({ ...claim, account: 'SomeoneElses' }),
  mode: (claim) => ({ ...claim, live: true }),
  reference: (claim) => ({ ...claim, reference: 'PSP9999999999999' }),
  amount: (claim) => ({ ...claim, amountMinor: 2499 }),
  currency: (claim) => ({ ...claim, currency: 'EUR' }),
};

describe('the provider binding check', () => {
  it('binds a claim that names exactly what we stored (currency in either case)', () => {
    expect(bindingMismatches(stored, exact)).toEqual([]);
  });

  it('names every field that differs, and only those, whichever of them differ', () => {
    fc.assert(
      fc.property(fc.subarray(Object.keys(wrong) as BindingField[]), (fields) => {
        const claim = fields.reduce((changed, field) => wrong[field](changed), exact);
        expect(bindingMismatches(stored, claim).sort()).toEqual([...fields].sort());
      }),
    );
  });

  it('takes an absent account as the platform’s own: a connected account’s callback never binds a platform payment', () => {
    const platform = { ...stored, provider: 'stripe', provider_account: undefined };
    const claim = { ...exact, provider: 'stripe' };
    expect(bindingMismatches(platform, { ...claim, account: undefined })).toEqual([]);
    expect(bindingMismatches(platform, { ...claim, account: '' })).toEqual([]);
    expect(bindingMismatches(platform, { ...claim, account: 'acct_1Attacker' })).toEqual(['account']);
    expect(bindingMismatches(stored, { ...exact, account: undefined })).toEqual(['account']);
  });

  it('compares the reference only once we stored one, and what a callback does not carry not at all', () => {
    const { provider_reference: _none, ...lost } = stored;
    expect(bindingMismatches(lost, { ...exact, reference: 'PSP9999999999999' })).toEqual([]);
    // Provider, account and mode are compared all the same.
    expect(bindingMismatches(lost, { ...exact, account: 'SomeoneElses', live: true })).toEqual(['account', 'mode']);
    const { reference: _r, amountMinor: _a, currency: _c, ...bare } = exact;
    expect(bindingMismatches(stored, bare)).toEqual([]);
  });

  it('lets a modification be about at most the payment’s amount', () => {
    const { amountMinor: _whole, ...modification } = exact;
    expect(bindingMismatches(stored, { ...modification, atMostMinor: 2500 })).toEqual([]);
    expect(bindingMismatches(stored, { ...modification, atMostMinor: 1 })).toEqual([]);
    expect(bindingMismatches(stored, { ...modification, atMostMinor: 2501 })).toEqual(['amount']);
    expect(bindingMismatches({ ...stored, amount_minor: undefined }, { ...modification, atMostMinor: 1 })).toEqual([
      'amount',
    ]);
  });

  it('compares amounts in the minor units of the provider the callback speaks for', () => {
    // 500 ISK (ISO: no decimals) is 50000 at Adyen and at Stripe (two decimals both); 1000.00 IDR
    // (ISO: two) is 1000 at Adyen (none) and 100000 at Stripe.
    const isk = { ...stored, amount_minor: 500, currency: 'ISK' };
    expect(bindingMismatches(isk, { ...exact, amountMinor: 50000, currency: 'ISK' })).toEqual([]);
    expect(bindingMismatches(isk, { ...exact, amountMinor: 500, currency: 'ISK' })).toEqual(['amount']);
    const idr = { ...stored, amount_minor: 100000, currency: 'IDR' };
    expect(bindingMismatches(idr, { ...exact, amountMinor: 1000, currency: 'IDR' })).toEqual([]);
    expect(bindingMismatches(idr, { ...exact, amountMinor: 100000, currency: 'IDR' })).toEqual(['amount']);
    const { amountMinor: _whole, ...modification } = exact;
    expect(bindingMismatches(idr, { ...modification, atMostMinor: 1000, currency: 'IDR' })).toEqual([]);
    expect(bindingMismatches(idr, { ...modification, atMostMinor: 1001, currency: 'IDR' })).toEqual(['amount']);
    const atStripe = { ...idr, provider: 'stripe' };
    const stripeClaim = { ...exact, provider: 'stripe', currency: 'idr' };
    expect(bindingMismatches(atStripe, { ...stripeClaim, amountMinor: 100000 })).toEqual([]);
    expect(bindingMismatches(atStripe, { ...stripeClaim, amountMinor: 1000 })).toEqual(['amount']);
  });

  it('answers whether the callback may change the record', () => {
    expect(boundToCallback(stored, exact, 'test')).toBe(true);
    expect(boundToCallback(stored, wrong.account(exact), 'test')).toBe(false);
  });
});
