import type { SubscriptionShape } from '@svc/subscriptions';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, type PortalSettings } from '../domain/settings';
import { PORTAL_LOCALES } from '../repository/link-repository';
import { MANAGE_MESSAGES, type ManageKey } from './manage-messages';
import {
  cancelPage,
  formatMoney,
  giftsPage,
  parseMajorAmount,
  retentionPage,
  subscriptionList,
  subscriptionPage,
} from './manage-pages';
import { placeholders } from './messages';
import type { PageContext } from './pages';

const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>`;
const ctx: PageContext = {
  locale: 'en',
  brand: { name: HOSTILE, color: '#1f5fa8' },
  selfPath: '/portal/subscriptions/s',
  csrfToken: 'c'.repeat(43),
};
const ALL_ON: PortalSettings = { ...structuredClone(DEFAULT_SETTINGS), enabled: true };

const subscription = {
  uuid: 'a1b2c3d4-0000-4000-8000-000000000001',
  currency: 'CHF',
  amount: 2500,
  timezone: 'Europe/Zurich',
  next_due_date: 1_933_538_400,
  subscription_status: 'active',
  recurring_interval: 'monthly',
  payment_method: 'card',
  payment_source_uuid: 'p',
  account_uuid: 'a',
} as unknown as SubscriptionShape;

const FORMS = {
  amount: '/amount"',
  interval: '/interval"',
  next_date: '/next-date"',
  skip: '/skip"',
  pause: '/pause"',
  payment_method: '/code"',
  cancel: '/cancel"',
} as const;

describe('the donor’s pages', () => {
  it('escape every value they show', () => {
    const pages = [
      subscriptionPage(ctx, {
        subscription,
        settings: { ...ALL_ON, cancel_reasons: [HOSTILE], intervals: [HOSTILE] },
        errors: { amount: HOSTILE, '': HOSTILE },
        values: { amount: HOSTILE, comment: HOSTILE },
        codeSent: true,
        methods: { card: true, sepa: true },
      }),
      cancelPage(
        ctx,
        subscription,
        { ...ALL_ON, cancel_reasons: [HOSTILE] },
        { reason: HOSTILE },
        { comment: HOSTILE },
      ),
      giftsPage(ctx, 2031, [{ created: 1_930_000_000, amount: { value: '2500', currency: 'CHF' }, status: HOSTILE }]),
    ];
    for (const page of pages) {
      expect(page.html).not.toContain('<script');
      expect(page.html).not.toContain('<img');
      expect(page.html).toContain('&lt;script&gt;');
    }
  });

  it.each(Object.keys(FORMS) as (keyof typeof FORMS)[])('hide the %s form when the feature is off', (feature) => {
    const on = subscriptionPage(ctx, { subscription, settings: ALL_ON }).html;
    expect(on).toContain(`/portal/subscriptions/${subscription.uuid}${FORMS[feature]}`);
    const off = subscriptionPage(ctx, {
      subscription,
      settings: { ...ALL_ON, features: { ...ALL_ON.features, [feature]: false } },
    }).html;
    expect(off).not.toContain(`/portal/subscriptions/${subscription.uuid}${FORMS[feature]}`);
  });

  it('show the retention offer before the cancel form when one is set', () => {
    const direct = subscriptionPage(ctx, { subscription, settings: ALL_ON }).html;
    expect(direct).toContain('name="reason"');
    for (const offer of ['pause', 'lower_amount'] as const) {
      const settings = { ...ALL_ON, retention_offer: offer };
      const view = subscriptionPage(ctx, { subscription, settings }).html;
      expect(view).not.toContain('name="reason"');
      expect(view).toContain(`action="/portal/subscriptions/${subscription.uuid}/offer"`);
      const page = retentionPage(ctx, subscription, settings, offer).html;
      expect(page).toContain(offer === 'pause' ? '/pause"' : '/amount"');
      expect(page).toContain(`href="/portal/subscriptions/${subscription.uuid}/cancel?locale=en"`);
      expect(page).toContain('No thanks, cancel my donation');
    }
    // An offer whose change is off is not made: straight to the cancel form.
    const noPause = { ...ALL_ON, retention_offer: 'pause' as const, features: { ...ALL_ON.features, pause: false } };
    expect(subscriptionPage(ctx, { subscription, settings: noPause }).html).toContain('name="reason"');
  });

  it('label every input, group the card fields, and carry the CSRF token in every POST form', () => {
    const { html } = subscriptionPage(ctx, {
      subscription,
      settings: ALL_ON,
      codeSent: true,
      methods: { card: true, sepa: true },
    });
    const ids = [...html.matchAll(/<(?:input|select|textarea) (?:type="(?!hidden)[^"]*" )?id="([^"]+)"/g)].map(
      (match) => match[1],
    );
    expect(ids.length).toBeGreaterThan(10);
    for (const id of ids) expect(html, id).toContain(`<label for="${id}">`);
    expect(html).toContain('<legend>New card</legend>');
    expect(html).toContain('<legend>Expiry date</legend>');
    const posts = html.split('<form method="post"').length - 1;
    expect(html.split('name="csrf_token" value="cccc').length - 1).toBe(posts);
    // Headings in order: one h1, then h2s.
    expect(html.match(/<h1[ >]/g)?.length).toBe(1);
    expect(html).not.toMatch(/<h[3-6][ >]/);
  });

  it('format amounts in the locale and read major units exactly', () => {
    expect(formatMoney('en', 2500, 'CHF')).toMatch(/CHF\s25\.00/);
    expect(formatMoney('de', 123456, 'EUR')).toMatch(/1.234.56/);
    expect(parseMajorAmount('30.05', 'CHF')).toEqual({ ok: true, minor: 3005 });
    expect(parseMajorAmount('30,1', 'EUR')).toEqual({ ok: true, minor: 3010 });
    expect(parseMajorAmount('0.29', 'CHF')).toEqual({ ok: true, minor: 29 });
    expect(parseMajorAmount('30.055', 'CHF')).toEqual({ ok: false, reason: 'fraction' });
    expect(parseMajorAmount('30.50', 'JPY')).toEqual({ ok: false, reason: 'fraction' });
    expect(parseMajorAmount('3000', 'JPY')).toEqual({ ok: true, minor: 3000 });
    expect(parseMajorAmount('1.234', 'KWD')).toEqual({ ok: true, minor: 1234 });
    expect(parseMajorAmount('-5', 'CHF')).toEqual({ ok: false, reason: 'format' });
    expect(parseMajorAmount('1e3', 'CHF')).toEqual({ ok: false, reason: 'format' });
  });

  it('list subscriptions with the interval in words, and link to the gifts', () => {
    const html = subscriptionList({ ...ctx, locale: 'fr' }, [subscription], { year: 2031 }).value;
    expect(html).toContain('Chaque mois');
    expect(html).toContain(`href="/portal/subscriptions/${subscription.uuid}?locale=fr"`);
    expect(html).toContain('href="/portal/gifts?year=2031&amp;locale=fr"');
  });
});

describe('the donor’s pages’ messages', () => {
  const keys = Object.keys(MANAGE_MESSAGES.en) as ManageKey[];
  it.each(PORTAL_LOCALES)('%s has every key, non-empty, plain, with English’s placeholders', (locale) => {
    const catalogue = MANAGE_MESSAGES[locale];
    expect(Object.keys(catalogue).sort()).toEqual([...keys].sort());
    for (const key of keys) {
      expect(catalogue[key].trim(), `${locale}.${key}`).not.toBe('');
      expect(catalogue[key], `${locale}.${key}`).not.toMatch(/[<>&]/);
      expect(placeholders(catalogue[key]), `${locale}.${key}`).toEqual(placeholders(MANAGE_MESSAGES.en[key]));
    }
    if (locale === 'de') for (const key of keys) expect(catalogue[key], key).not.toContain('ß');
  });
});

describe('the page a provider sends the donor back to', () => {
  it('needs no session and links on to the home page with the subscription, in the donor’s language', async () => {
    const { returnedPage } = await import('./manage-pages');
    const uuid = '0b7c7a52-5c1f-4a3e-9d8e-6a1f2b3c4d5e';
    const rendered = returnedPage({ locale: 'de', brand: { name: 'Verein', color: '#0a3d62' } }, uuid);
    expect(rendered.html).toContain('Willkommen zurück');
    expect(rendered.html).toContain(`href="/portal/home?method=${uuid}&amp;locale=de"`);
    expect(rendered.html).not.toContain('csrf-token');
  });
});
