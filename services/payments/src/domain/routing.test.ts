import { paymentMethodProfileSchema } from '@svc/organisations';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candidateContext, orderCandidates } from './routing';

const CURRENCIES = ['CHF', 'EUR', 'GBP'] as const;

const candidate = fc.record(
  {
    provider: fc.constantFrom('stripe', 'adyen', 'simulated'),
    when: fc.record(
      {
        currency: fc.subarray([...CURRENCIES], { minLength: 1 }),
        min_amount: fc.integer({ min: 0, max: 5_000 }).map(String),
        max_amount: fc.integer({ min: 5_000, max: 100_000 }).map(String),
        test_mode: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    weight: fc.integer({ min: 0, max: 10 }),
  },
  { requiredKeys: ['provider'] },
);

const payment = fc.record({
  currency: fc.constantFrom(...CURRENCIES),
  minor: fc.integer({ min: 0, max: 200_000 }),
  testMode: fc.boolean(),
});

const profileOf = (route: unknown[]) =>
  paymentMethodProfileSchema.parse({ name: 'card', payment_method: 'card', route });

describe('orderCandidates', () => {
  it('tries exactly the candidates whose conditions match, in the profile’s order after the one drawn', () => {
    fc.assert(
      fc.property(
        fc.array(candidate, { minLength: 1, maxLength: 6 }),
        payment,
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (route, p, draw) => {
          const profile = profileOf(route);
          const ordered = orderCandidates(profile, p, draw);
          const matching = (profile.route ?? []).filter((c) => {
            const when = c.when ?? {};
            return (
              (!when.currency || when.currency.includes(p.currency)) &&
              (when.min_amount === undefined || p.minor >= Number(when.min_amount)) &&
              (when.max_amount === undefined || p.minor <= Number(when.max_amount)) &&
              (when.test_mode === undefined || when.test_mode === p.testMode)
            );
          });
          expect(new Set(ordered)).toEqual(new Set(matching));
          expect(ordered).toHaveLength(matching.length);
          // After the first, the profile's order.
          const rest = ordered.slice(1);
          expect(rest).toEqual(matching.filter((c) => c !== ordered[0]));
          // Weighted candidates present: the first is one of them.
          if (matching.some((c) => (c.weight ?? 0) > 0)) expect(ordered[0]?.weight ?? 0).toBeGreaterThan(0);
          else expect(ordered[0]).toBe(matching[0]);
        },
      ),
    );
  });

  it('shares new payments by weight: over evenly spread draws each weighted candidate goes first its share of the time', () => {
    const profile = profileOf([
      { provider: 'stripe', weight: 3 },
      { provider: 'adyen', weight: 1 },
      { provider: 'simulated' },
    ]);
    const firsts = Array.from(
      { length: 400 },
      (_, i) => orderCandidates(profile, { currency: 'CHF', minor: 100, testMode: true }, (i + 0.5) / 400)[0]?.provider,
    );
    expect(firsts.filter((p) => p === 'stripe')).toHaveLength(300);
    expect(firsts.filter((p) => p === 'adyen')).toHaveLength(100);
  });

  it('treats a single-provider profile as one candidate with the profile’s own settings', () => {
    const profile = paymentMethodProfileSchema.parse({
      name: 'card-adyen',
      payment_method: 'card',
      provider: 'adyen',
      merchant_account: 'CharityECOM',
      raw_card_data: true,
    });
    const [only, ...none] = orderCandidates(profile, { currency: 'EUR', minor: 1, testMode: false });
    expect(none).toEqual([]);
    expect(candidateContext(profile, only ?? { provider: '' }, false).profile).toMatchObject({
      provider: 'adyen',
      merchant_account: 'CharityECOM',
      raw_card_data: true,
    });
  });

  it('gives each candidate its own account, not another candidate’s', () => {
    const profile = profileOf([
      { provider: 'stripe', stripe_account: 'acct_1One' },
      { provider: 'adyen', merchant_account: 'CharityTwo' },
    ]);
    const [stripe, adyen] = orderCandidates(profile, { currency: 'CHF', minor: 1, testMode: true });
    expect(candidateContext(profile, stripe ?? { provider: '' }, true).profile).not.toHaveProperty('merchant_account');
    expect(candidateContext(profile, adyen ?? { provider: '' }, true).profile).toMatchObject({
      merchant_account: 'CharityTwo',
    });
    expect(candidateContext(profile, adyen ?? { provider: '' }, true).profile).not.toHaveProperty('stripe_account');
  });
});

describe('a routed profile', () => {
  const issues = (value: unknown) => {
    const parsed = paymentMethodProfileSchema.safeParse(value);
    return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
  };

  it('names either one provider or a route, never both or neither', () => {
    expect(issues({ name: 'x', payment_method: 'card', provider: 'stripe', route: [{ provider: 'adyen' }] })).toEqual([
      'provider',
    ]);
    expect(issues({ name: 'x', payment_method: 'card' })).toEqual(['provider']);
    expect(issues({ name: 'x', payment_method: 'card', route: [] })).toEqual(['route']);
  });

  it('names the field of a bad candidate', () => {
    expect(
      issues({
        name: 'x',
        payment_method: 'card',
        route: [{ provider: 'adyen', merchant_account: 'no spaces allowed' }],
      }),
    ).toEqual(['route.0.merchant_account']);
    expect(
      issues({
        name: 'x',
        payment_method: 'card',
        route: [{ provider: 'stripe' }, { provider: 'adyen', when: { currency: ['chf'] } }],
      }),
    ).toEqual(['route.1.when.currency.0']);
    expect(
      issues({
        name: 'x',
        payment_method: 'card',
        route: [{ provider: 'stripe', when: { min_amount: '500', max_amount: '100' } }],
      }),
    ).toEqual(['route.0.when.min_amount']);
    expect(issues({ name: 'x', payment_method: 'card', route: [{ provider: 'stripe', weight: -1 }] })).toEqual([
      'route.0.weight',
    ]);
    expect(issues({ name: 'x', payment_method: 'card', route: [{ provider: 'stripe', colour: 'red' }] })).toEqual([
      'route.0',
    ]);
  });

  it('takes fees on the profile and on candidates, strictly: a percentage 0 ≤ p < 100 and whole minor units', () => {
    const fees = (value: unknown) => ({ name: 'x', payment_method: 'card', provider: 'simulated', fees: value });
    expect(issues(fees({ percent: '2.9', fixed: '30' }))).toEqual([]);
    expect(issues(fees({ percent: '0', fixed: '0' }))).toEqual([]);
    expect(issues(fees({ percent: '99.9999', fixed: '0' }))).toEqual([]);
    for (const percent of ['100', '-1', '2.90001', '2,9', '1e1', '', 2.9]) {
      expect(issues(fees({ percent, fixed: '30' })), String(percent)).toEqual(['fees.percent']);
    }
    for (const fixed of ['-1', '0.5', '030', '', 30]) {
      expect(issues(fees({ percent: '2.9', fixed })), String(fixed)).toEqual(['fees.fixed']);
    }
    expect(issues(fees({ percent: '2.9' }))).toEqual(['fees.fixed']);
    expect(issues(fees({ percent: '2.9', fixed: '30', cap: '500' }))).toEqual(['fees']);
    expect(
      issues({
        name: 'x',
        payment_method: 'card',
        route: [{ provider: 'simulated' }, { provider: 'adyen', fees: { percent: '150', fixed: '0' } }],
      }),
    ).toEqual(['route.1.fees.percent']);
  });
});
