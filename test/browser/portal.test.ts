import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, ROOT, type Service, startService, stopService } from './support';

/**
 * The donor portal's own pages in Chromium (issue 47 point 3): the local service as `pnpm start`
 * runs it, a donor made through the API with the demo seed's client, the link opened and
 * "Continue" pressed, then every change walked through its form; axe-core on every page (zero
 * violations), one form sent by keyboard alone with its focus ring checked, and a screenshot
 * of each page in .test-results/portal/.
 */
const ORG = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT = '8b3f4e5c-6d7a-4b82-8c93-bd4e5f607182';
const CLIENT = { client_id: 'demo-client', client_secret: 'demo-secret-change-me' };
const SHOTS = join(ROOT, '.test-results/portal');
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

let service: Service | undefined;
let browser: Browser | undefined;
let context: BrowserContext | undefined;

function base(): string {
  if (!service) throw new Error('The service did not start');
  return service.url;
}

async function api(method: string, path: string, body?: unknown, token?: string) {
  const response = await fetch(`${base()}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: the test reads answers freely
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
}

let shot = 0;
/** axe-core on the page (zero violations), and its screenshot. */
async function check(page: Page, name: string): Promise<void> {
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the injected global
    const result = await (globalThis as any).axe.run();
    return result.violations.map((v: { id: string; nodes: { html: string }[] }) => ({
      id: v.id,
      nodes: v.nodes.map((n) => n.html),
    }));
  });
  expect(violations, name).toEqual([]);
  mkdirSync(SHOTS, { recursive: true });
  shot += 1;
  await page.screenshot({ path: join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

/** Submits by clicking and waits for the next page. */
async function submit(page: Page, button: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForNavigation(), button.click()]);
}

beforeAll(async () => {
  service = await startService();
  browser = await launchChromium();
  context = await browser.newContext({ bypassCSP: true, viewport: { width: 1000, height: 800 } });
  context.setDefaultTimeout(15_000);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stopService(service);
});

describe('the donor portal in Chromium', () => {
  it('walks every change, by mouse and by keyboard, in English and German, without an axe violation', async () => {
    const token = (await api('POST', '/oauth2/token', { grant_type: 'client_credentials', ...CLIENT })).body
      .access_token as string;
    const settings = await api(
      'PUT',
      `/organisations/${ORG}/portal-settings`,
      {
        enabled: true,
        features: {
          amount: true,
          interval: true,
          next_date: true,
          skip: true,
          pause: true,
          payment_method: true,
          cancel: true,
        },
        min_amount: 500,
        max_amount: null,
        intervals: ['monthly', 'quarterly', 'yearly'],
        cancel_reasons: ['too_expensive', 'other'],
        retention_offer: 'pause',
        brand: { name: 'Verein Sonnenschein', color: '#0a3d62' },
        return_url: null,
      },
      token,
    );
    expect(settings.status).toBe(200);
    const email = `portal-browser-${Date.now()}@example.org`;
    const supporter = await api('POST', '/supporters', { organisation_uuid: ORG, first_name: 'Ada', email }, token);
    const source = await api(
      'POST',
      '/payment-sources',
      {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-test',
        amount: { value: '100', currency: 'CHF' },
        payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      },
      token,
    );
    const made = await api(
      'POST',
      '/subscriptions',
      {
        account_uuid: ACCOUNT,
        payment_source_uuid: source.body.uuid,
        supporter_uuid: supporter.body.uuid,
        currency: 'CHF',
        amount: 2500,
        recurring_interval: 'monthly',
        status: 'active',
      },
      token,
    );
    expect(made.status).toBe(201);
    const uuid = made.body.uuid as string;
    const link = await api(
      'POST',
      `/supporters/${supporter.body.uuid}/portal-links`,
      { flow: 'manage', locale: 'en' },
      token,
    );
    const url = new URL(link.body.url);
    const stored = async () => (await api('GET', `/subscriptions/${uuid}`, undefined, token)).body;

    if (!context) throw new Error('No browser');
    const page = await context.newPage();
    await page.goto(`${base()}${url.pathname}${url.search}`);
    await check(page, 'link');
    await submit(page, page.getByRole('button', { name: 'Continue' }));
    expect(new URL(page.url()).pathname).toBe('/portal/home');
    expect(await page.locator('html').getAttribute('lang')).toBe('en-GB');
    await check(page, 'home');

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: /CHF.25\.00/ }).click()]);
    await check(page, 'subscription');

    // Keyboard only: Tab to the amount field, type, Enter. The focused field shows its ring.
    await page.locator('#main').focus();
    let steps = 0;
    // Runs in the page (the test's TypeScript has no DOM types).
    type Dom = {
      document: { activeElement: { id: string } | null };
      getComputedStyle: (element: unknown) => { outlineStyle: string; boxShadow: string };
    };
    while (!(await page.evaluate(() => (globalThis as unknown as Dom).document.activeElement?.id === 'amount'))) {
      await page.keyboard.press('Tab');
      steps += 1;
      expect(steps).toBeLessThan(40);
    }
    const ring = await page.evaluate(() => {
      const dom = globalThis as unknown as Dom;
      const style = dom.getComputedStyle(dom.document.activeElement);
      return { outline: style.outlineStyle, shadow: style.boxShadow };
    });
    expect(ring.outline !== 'none' || ring.shadow !== 'none').toBe(true);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('30.50');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await page.getByText('The amount has been changed.').waitFor();
    expect((await stored()).amount).toBe(3050);
    await check(page, 'amount-done');

    await page.getByLabel('New interval').selectOption('quarterly');
    await submit(page, page.getByRole('button', { name: 'Change the interval' }));
    await page.getByText('The interval has been changed.').waitFor();
    expect((await stored()).recurring_interval).toBe('quarterly');

    const next = await page.locator('#next_due_date').inputValue();
    const moved = new Date(Date.parse(`${next}T00:00:00Z`) + 5 * 86_400_000).toISOString().slice(0, 10);
    await page.locator('#next_due_date').fill(moved);
    await submit(page, page.getByRole('button', { name: 'Change the date' }));
    await page.getByText('The next charge date has been changed.').waitFor();
    await check(page, 'date-done');

    await submit(page, page.getByRole('button', { name: /^Skip the charge of/ }));
    await page.getByText('The next charge will be skipped.').waitFor();

    await submit(page, page.getByRole('button', { name: 'Pause', exact: true }));
    await page.getByText('Your donation is paused.', { exact: true }).first().waitFor();
    expect((await stored()).subscription_status).toBe('suspended');
    await check(page, 'paused');
    await submit(page, page.getByRole('button', { name: 'Resume now' }));
    await page.getByText('Your donation has been resumed.').waitFor();
    expect((await stored()).subscription_status).toBe('active');

    // The payment method: a code by mail, then a new card.
    await submit(page, page.getByRole('button', { name: 'Send me a code' }));
    await page.getByText('We have sent a code to your e-mail address.', { exact: true }).waitFor();
    await check(page, 'code-sent');
    expect((await api('POST', '/_local/settle', {})).status).toBe(200);
    const mail = await api('GET', `/_local/mail?to=${encodeURIComponent(email)}`);
    const code = /\b(\d{6})\b/.exec(mail.body[0]?.text ?? '')?.[1] ?? '';
    expect(code).toMatch(/^\d{6}$/);
    const card = page.getByRole('group', { name: 'New card' });
    await card.getByLabel('Code from the e-mail').fill(code);
    await card.getByLabel('Card number').fill('5555 5555 5555 4444');
    await card.getByLabel('Month (MM)').fill('11');
    await card.getByLabel('Year (YYYY)').fill('2099');
    await card.getByLabel('Security code (CVC)').fill('321');
    const before = (await stored()).payment_source_uuid;
    await submit(page, page.getByRole('button', { name: 'Use this card' }));
    await page.getByText('Your new payment method will be used from the next charge.').waitFor();
    expect((await stored()).payment_source_uuid).not.toBe(before);

    // German once, by the language switcher.
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Deutsch' }).click()]);
    expect(await page.locator('html').getAttribute('lang')).toBe('de-CH');
    await page.getByRole('heading', { level: 1, name: 'Ihre wiederkehrende Spende' }).waitFor();
    await check(page, 'subscription-de');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'English' }).click()]);

    // Gifts by year, and the year before.
    await page.goto(`${base()}/portal/home?locale=en`);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Your gifts by year' }).click()]);
    await page.getByRole('heading', { level: 1, name: /^Your gifts in \d{4}$/ }).waitFor();
    await check(page, 'gifts');
    await Promise.all([page.waitForNavigation(), page.locator('a[rel="prev"]').click()]);
    await check(page, 'gifts-previous');

    // Cancelling: the retention offer first, then "no thanks", then the form.
    await page.goto(`${base()}/portal/subscriptions/${uuid}?locale=en`);
    await submit(page, page.getByRole('button', { name: 'Cancel this donation' }));
    await page.getByRole('heading', { level: 1, name: 'Before you go' }).waitFor();
    await check(page, 'offer');
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole('link', { name: 'No thanks, cancel my donation' }).click(),
    ]);
    await check(page, 'cancel');
    await page.getByLabel('Why are you cancelling?').selectOption('other');
    await page.getByLabel('Comment (optional)').fill('Moving abroad');
    await submit(page, page.getByRole('button', { name: 'Cancel my donation' }));
    await page.getByText('Your donation has been cancelled.', { exact: false }).waitFor();
    expect(await stored()).toMatchObject({ subscription_status: 'cancelled', cancellation: { reason: 'other' } });
    await check(page, 'cancelled');
  }, 180_000);
});
