import { mkdirSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  LOCALE_NAMES,
  type MessageKey,
  PAGE_LOCALES,
  type PageLocale,
  t,
} from '../../services/onboarding/src/page/messages';
import { launchChromium, SCREENSHOTS, type Service, startService, stopService } from './support';

/**
 * The hosted connect page (/connect) in a real browser: the local service as `pnpm start` runs
 * it, in its own process, and Debian's Chromium driven by playwright-core. Both paths (a new user
 * creates an organisation; a known user signs in and connects one) in two locales each, once
 * without JavaScript, and the problem pages. The screenshots in docs/screenshots (shown in the
 * README) are written here, each run.
 *
 * Labels come from the page's message catalogue; the headings checked against fixed texts prove
 * that the page really is in the expected language.
 */
const PARTNER = { client_id: 'demo-partner', client_secret: 'partner-secret-change-me' };
const CONFIGURATION = 'cf738c9a-ab1e-4fc6-b0d7-f18293a4b5c6';
const PARTNER_BASE = 'https://partner.example.org/';
const TARGET = 'https://partner.example.org/welcome?step=done';
const PASSWORD = 'correct horse battery staple';

/** Texts written down independently of the catalogue: the page must show exactly these. */
const HEADINGS: Record<PageLocale, { email: string; onboard: string; signIn: string; pick: string }> = {
  de_CH: {
    email: 'Organisation verbinden',
    onboard: 'Organisation erstellen',
    signIn: 'Anmelden',
    pick: 'Organisation auswählen',
  },
  fr_CH: {
    email: 'Connecter votre organisation',
    onboard: 'Créer votre organisation',
    signIn: 'Connexion',
    pick: 'Choisir une organisation',
  },
  // Only the no-JavaScript walk is in Italian: its headings come from the catalogue.
  it_CH: {
    email: t('it_CH', 'email_title'),
    onboard: t('it_CH', 'onboard_title'),
    signIn: t('it_CH', 'signin_title'),
    pick: t('it_CH', 'pick_title'),
  },
  en_GB: {
    email: 'Connect your organisation',
    onboard: 'Create your organisation',
    signIn: 'Sign in',
    pick: 'Choose an organisation',
  },
};
const DESCRIPTIONS: Record<PageLocale, string> = {
  de_CH: 'Spenderverwaltung für Schweizer Organisationen.',
  fr_CH: 'Gestion des donateurs pour les organisations suisses.',
  it_CH: 'Gestione dei donatori per le organizzazioni svizzere.',
  en_GB: 'Donor management for Swiss charities.',
};

let service: Service | undefined;
let browser: Browser | undefined;
let partnerSite: PartnerStandIn | undefined;

function baseUrl(): string {
  if (!service) throw new Error('The service did not start');
  return service.url;
}

async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  bearer?: string,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** A fresh partner token each time: the grants of a just created organisation are in it. */
async function partnerToken(): Promise<string> {
  const response = await api<{ access_token: string }>('POST', '/oauth2/token', {
    grant_type: 'client_credentials',
    ...PARTNER,
  });
  expect(response.status).toBe(200);
  return response.body.access_token;
}

interface Process {
  uuid: string;
  token: string;
  status: string;
  onboarding_url: string;
  results?: { organisation: { uuid: string } };
}

interface Organisation {
  name: string;
  street: string;
  postalCode: string;
  city: string;
  bank: string;
}

function organisationData(o: Organisation) {
  return {
    name: o.name,
    merchant_category_code: '8398',
    main_address: {
      address_line1: o.street,
      address_line2: '',
      postal_code: o.postalCode,
      city: o.city,
      country: 'CH',
    },
    billing_information: { iban: 'CH93 0076 2011 6238 5295 7', bank_name: o.bank, account_holder: o.name },
  };
}

async function createProcess(data: { user?: Record<string, string>; organisation?: Organisation }): Promise<Process> {
  const response = await api<Process>(
    'POST',
    '/onboarding/processes',
    {
      onboarding_configuration_uuid: CONFIGURATION,
      ...(data.user ? { user: data.user } : {}),
      ...(data.organisation ? { organisation: organisationData(data.organisation) } : {}),
    },
    await partnerToken(),
  );
  expect(response.status).toBe(201);
  return response.body;
}

/** The page's address: the process's `onboarding_url` (on the running service's own port). */
function pageUrl(process: Process, redirect?: string): string {
  const given = new URL(process.onboarding_url);
  expect(given.origin).toBe(new URL(baseUrl()).origin);
  expect(given.pathname).toBe('/connect');
  expect(given.searchParams.get('token')).toBe(process.token);
  const url = new URL(given.href);
  if (redirect !== undefined) url.searchParams.set('redirect_url', Buffer.from(redirect, 'utf8').toString('base64'));
  return url.href;
}

async function readProcess(uuid: string): Promise<Process> {
  const response = await api<Process>('GET', `/onboarding/processes/${uuid}`, undefined, await partnerToken());
  expect(response.status).toBe(200);
  return response.body;
}

/** The partner's active integration of an organisation. */
async function activeIntegration(organisationUuid: string): Promise<string> {
  const integrations = await api<{ uuid: string; status: string }[]>(
    'GET',
    `/partner-integrations?organisation_uuid=${organisationUuid}`,
    undefined,
    await partnerToken(),
  );
  expect(integrations.status).toBe(200);
  const active = integrations.body.filter((i) => i.status === 'active');
  expect(active).toHaveLength(1);
  return active[0]?.uuid as string;
}

async function disableIntegration(organisationUuid: string): Promise<void> {
  const uuid = await activeIntegration(organisationUuid);
  const disabled = await api('POST', `/partner-integrations/${uuid}/disable`, undefined, await partnerToken());
  expect(disabled.status).toBe(200);
}

/**
 * A user with one organisation, made through the API. The partner can only connect an
 * organisation it is not connected to: the integration is disabled again unless `keepConnected`.
 */
async function existingUser(
  email: string,
  organisation: Organisation,
  keepConnected: boolean,
): Promise<{ organisationUuid: string }> {
  const process = await createProcess({
    user: { email, first_name: 'Claire', last_name: 'Dubois', locale: 'fr_CH' },
    organisation,
  });
  const onboarded = await api<Process>('POST', `/onboarding/processes/token/${process.token}/onboard`, {
    user: { password: PASSWORD },
  });
  expect(onboarded.status).toBe(201);
  const organisationUuid = onboarded.body.results?.organisation.uuid as string;
  if (keepConnected) await activeIntegration(organisationUuid);
  else await disableIntegration(organisationUuid);
  return { organisationUuid };
}

const VIEWPORT = { width: 1000, height: 900 };

/**
 * The partner's host. partner.example.org does not resolve here, and Playwright's `route()` is not
 * consulted for the hops of a redirect (the 303 from a form post), so Chromium resolves the name to
 * this small https stand-in instead (`--host-resolver-rules`; its certificate is the test
 * receivers' one, hence `ignoreHTTPSErrors`). It records what the browser asked it for.
 */
interface PartnerStandIn {
  server: HttpsServer;
  port: number;
  requests: string[];
}

async function startPartnerStandIn(): Promise<PartnerStandIn> {
  const { cert, key } = inject('receiverTls');
  const requests: string[] = [];
  const server = createHttpsServer({ cert, key }, (request, response) => {
    if (request.url === '/favicon.ico') {
      response.writeHead(404).end();
      return;
    }
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><html lang="en"><title>Partner</title><h1>Partner</h1></html>');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  if (!browser) throw new Error('Chromium did not start');
  const context = await browser.newContext({
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    ignoreHTTPSErrors: true,
    ...options,
  });
  // Every page is rendered by the server: what a step shows is there once it has loaded.
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(NAVIGATION.timeout);
  return context;
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({
    path: join(SCREENSHOTS, `${name}.png`),
    fullPage: true,
    animations: 'disabled',
    caret: 'hide',
  });
}

/** Language, partner header (name, description, logo) and language links of any step. */
async function expectPageFrame(page: Page, locale: PageLocale, heading: string): Promise<void> {
  expect(await page.locator('html').getAttribute('lang')).toBe(locale.replace('_', '-'));
  expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(heading);
  await page.getByText(t(locale, 'intro', { partner: 'Demo Partner CRM' })).waitFor();
  await page.getByText(DESCRIPTIONS[locale]).waitFor();
  const logo = page.getByRole('img', { name: 'Demo Partner CRM' });
  await logo.waitFor();
  expect(await logo.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
  expect(
    await logo.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0),
  ).toBe(true);
  const languages = page.getByRole('navigation', { name: t(locale, 'language_switcher') });
  for (const other of PAGE_LOCALES) {
    const link = languages.getByRole('link', { name: LOCALE_NAMES[other], exact: true });
    expect(await link.getAttribute('hreflang')).toBe(other.replace('_', '-'));
    expect(new URL((await link.getAttribute('href')) as string, baseUrl()).searchParams.get('locale')).toBe(other);
    if (other === locale) expect(await link.getAttribute('aria-current')).toBe('true');
    else expect(await link.getAttribute('aria-current')).toBeNull();
  }
}

/** The text of the elements named by `aria-describedby`, as a screen reader announces it after the label. */
async function description(locator: Locator): Promise<string> {
  const ids = ((await locator.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id !== '');
  const page = locator.page();
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
  return texts
    .map((text) => (text ?? '').trim())
    .filter((text) => text !== '')
    .join(' ');
}

const NAVIGATION = { timeout: 60_000 };

/** Runs in the page (the test's TypeScript has no DOM types). */
const isFocused = (element: { ownerDocument: { activeElement: unknown } }) =>
  element === element.ownerDocument.activeElement;

/**
 * Submits the form with the named button and waits until the next document has loaded (also
 * when its address is the one of the current page). Returns the status of the POST's answer.
 */
async function submit(page: Page, button: string): Promise<number> {
  const answer = page.waitForResponse(
    (response) => response.request().isNavigationRequest() && response.request().method() === 'POST',
    NAVIGATION,
  );
  const loaded = page.waitForEvent('load', NAVIGATION);
  await page.getByRole('button', { name: button, exact: true }).click();
  await loaded;
  return (await answer).status();
}

interface NewUserWalk {
  locale: PageLocale;
  email: string;
  firstName: string;
  lastName: string;
  organisation: Organisation;
  /** Write the e-mail and onboarding screenshots of this locale. */
  screenshots?: boolean;
  /** Switch to English and back on the first step: the redirect must survive it. */
  switchLanguage?: boolean;
  javaScript?: boolean;
}

async function walkNewUser(walk: NewUserWalk): Promise<void> {
  const { locale, organisation } = walk;
  const process = await createProcess({
    user: { email: walk.email, first_name: walk.firstName, last_name: walk.lastName, locale },
    organisation,
  });
  const javaScript = walk.javaScript !== false;
  const context = await newContext({ javaScriptEnabled: javaScript });
  try {
    const page = await context.newPage();
    const opened = await page.goto(pageUrl(process, TARGET));
    expect(opened?.status()).toBe(200);
    await expectPageFrame(page, locale, HEADINGS[locale].email);
    if (walk.switchLanguage) {
      await page.getByRole('link', { name: LOCALE_NAMES.en_GB, exact: true }).click();
      await page.waitForURL(/[?&]locale=en_GB$/);
      await expectPageFrame(page, 'en_GB', HEADINGS.en_GB.email);
      await page.getByRole('link', { name: LOCALE_NAMES[locale], exact: true }).click();
      await page.waitForURL(new RegExp(`[?&]locale=${locale}$`));
      await expectPageFrame(page, locale, HEADINGS[locale].email);
    }

    // Step 1: the e-mail address, prefilled from the process.
    const email = page.getByLabel(t(locale, 'email_label'), { exact: true });
    expect(await email.inputValue()).toBe(walk.email);
    expect(await page.locator('input[name="recaptcha_token"]').inputValue()).toBe('test-captcha-ok');
    if (walk.screenshots) await screenshot(page, `connect-email-${locale}`);
    expect(await submit(page, t(locale, 'continue'))).toBe(200);

    // Step 2: the onboarding form, prefilled from the process.
    expect(new URL(page.url()).pathname).toBe('/connect/email');
    await expectPageFrame(page, locale, HEADINGS[locale].onboard);
    const field = (key: MessageKey) => page.getByLabel(t(locale, key), { exact: true });
    const optionalField = (key: MessageKey) =>
      page.getByLabel(`${t(locale, key)} (${t(locale, 'optional')})`, { exact: true });
    expect(await field('email_label').inputValue()).toBe(walk.email);
    expect(await field('email_label').getAttribute('readonly')).toBe('');
    expect(await field('first_name_label').inputValue()).toBe(walk.firstName);
    expect(await field('last_name_label').inputValue()).toBe(walk.lastName);
    expect(await field('user_locale_label').inputValue()).toBe(locale);
    expect(await field('organisation_name_label').inputValue()).toBe(organisation.name);
    expect(await field('mcc_label').inputValue()).toBe('8398');
    expect(await field('address_line1_label').inputValue()).toBe(organisation.street);
    expect(await optionalField('address_line2_label').inputValue()).toBe('');
    expect(await field('postal_code_label').inputValue()).toBe(organisation.postalCode);
    expect(await field('city_label').inputValue()).toBe(organisation.city);
    expect(await field('country_label').inputValue()).toBe('CH');
    expect(await field('iban_label').inputValue()).toBe('CH93 0076 2011 6238 5295 7');
    expect(await optionalField('bank_name_label').inputValue()).toBe(organisation.bank);
    expect(await field('account_holder_label').inputValue()).toBe(organisation.name);
    // The show/hide button is the script's: there with JavaScript, not without.
    const toggle = page.getByRole('button', { name: t(locale, 'password_show'), exact: true });
    expect(await toggle.count()).toBe(javaScript ? 1 : 0);
    if (walk.screenshots) await screenshot(page, `connect-onboard-${locale}`);
    if (javaScript) {
      // The script groups an IBAN typed without spaces when the field is left.
      await field('iban_label').fill('ch9300762011623852957');
      await field('iban_label').blur();
      expect(await field('iban_label').inputValue()).toBe('CH93 0076 2011 6238 5295 7');
    }
    await field('password_label').fill(PASSWORD);
    await field('password_confirmation_label').fill(PASSWORD);

    // Submit: a 303 from POST /connect/onboard to the partner's redirect target.
    const arrival = page.waitForRequest((request) => request.url() === TARGET && request.isNavigationRequest());
    expect(await submit(page, t(locale, 'onboard_submit'))).toBe(303);
    expect(page.url()).toBe(TARGET);
    const redirected = (await arrival).redirectedFrom();
    expect(redirected?.method()).toBe('POST');
    expect(new URL(redirected?.url() as string).pathname).toBe('/connect/onboard');
    expect((await redirected?.response())?.status()).toBe(303);
    await page.getByRole('heading', { name: 'Partner', exact: true }).waitFor();
    expect(partnerSite?.requests.at(-1)).toBe('GET /welcome?step=done');
  } finally {
    await context.close();
  }

  const done = await readProcess(process.uuid);
  expect(done.status).toBe('succeeded');
  const organisationUuid = done.results?.organisation.uuid as string;
  expect(organisationUuid).toEqual(expect.any(String));
  const read = await api<{ name: string }>(
    'GET',
    `/organisations/${organisationUuid}`,
    undefined,
    await partnerToken(),
  );
  expect(read.status).toBe(200);
  expect(read.body.name).toBe(organisation.name);
}

interface ExistingUserWalk {
  locale: PageLocale;
  email: string;
  organisation: Organisation;
  /** The process names the user (e-mail and locale); otherwise the browser's language decides. */
  prefilled: boolean;
  contextLocale?: string;
  /** Write the sign-in, error and picker screenshots of this locale. */
  screenshots?: boolean;
  /**
   * The organisation is still connected to the partner: the picker refuses it (409) until the
   * partner disables the integration; then the same choice connects.
   */
  stillConnected?: { message: string };
}

async function walkExistingUser(walk: ExistingUserWalk): Promise<void> {
  const { locale } = walk;
  const { organisationUuid } = await existingUser(walk.email, walk.organisation, walk.stillConnected !== undefined);
  const process = await createProcess(walk.prefilled ? { user: { email: walk.email, locale } } : {});
  const context = await newContext(walk.contextLocale ? { locale: walk.contextLocale } : {});
  try {
    const page = await context.newPage();
    // No redirect_url: the page ends on the partner's base URL.
    await page.goto(pageUrl(process));
    await expectPageFrame(page, locale, HEADINGS[locale].email);
    const email = page.getByLabel(t(locale, 'email_label'), { exact: true });
    expect(await email.inputValue()).toBe(walk.prefilled ? walk.email : '');
    await email.fill(walk.email);
    expect(await submit(page, t(locale, 'continue'))).toBe(200);

    // A known address: the sign-in form.
    await expectPageFrame(page, locale, HEADINGS[locale].signIn);
    expect(await page.getByLabel(t(locale, 'email_label'), { exact: true }).inputValue()).toBe(walk.email);
    const password = page.getByLabel(t(locale, 'password_label'), { exact: true });
    expect(await password.inputValue()).toBe('');
    expect(await password.getAttribute('aria-invalid')).toBeNull();
    if (walk.screenshots) await screenshot(page, `connect-signin-${locale}`);

    // A wrong password: the error summary (an alert, focused by the script) and the field marked.
    await password.fill('not the password at all');
    expect(await submit(page, t(locale, 'signin_submit'))).toBe(403);
    await expectPageFrame(page, locale, HEADINGS[locale].signIn);
    const summary = page.getByRole('alert');
    expect(await summary.getByRole('heading').textContent()).toBe(t(locale, 'error_summary_heading'));
    const summaryLink = summary.getByRole('link', { name: t(locale, 'error_credentials'), exact: true });
    expect(await summaryLink.getAttribute('href')).toBe('#password');
    expect(await summary.evaluate(isFocused)).toBe(true);
    const title = t(locale, 'doc_title', { step: HEADINGS[locale].signIn, partner: 'Demo Partner CRM' });
    expect(await page.title()).toBe(t(locale, 'doc_title_error', { title }));
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    expect(await description(password)).toBe(t(locale, 'error_credentials'));
    expect(await password.inputValue()).toBe('');
    if (walk.screenshots) await screenshot(page, `connect-error-${locale}`);

    // The right one: the organisation picker.
    await password.fill(PASSWORD);
    expect(await submit(page, t(locale, 'signin_submit'))).toBe(200);
    await expectPageFrame(page, locale, HEADINGS[locale].pick);
    await page.getByRole('group', { name: t(locale, 'pick_legend'), exact: true }).waitFor();
    const choice = page.getByLabel(walk.organisation.name, { exact: true });
    expect(await choice.isChecked()).toBe(true);
    if (walk.screenshots) await screenshot(page, `connect-pick-${locale}`);

    if (walk.stillConnected) {
      expect(await submit(page, t(locale, 'pick_submit'))).toBe(409);
      await expectPageFrame(page, locale, HEADINGS[locale].pick);
      const refusal = page.getByRole('alert');
      expect(await refusal.getByRole('heading').textContent()).toBe(t(locale, 'error_summary_heading'));
      expect(await refusal.getByRole('listitem').textContent()).toBe(walk.stillConnected.message);
      expect(await choice.getAttribute('aria-invalid')).toBe('true');
      expect(await description(choice)).toBe(walk.stillConnected.message);
      await disableIntegration(organisationUuid);
    }
    expect(await submit(page, t(locale, 'pick_submit'))).toBe(303);
    expect(page.url()).toBe(PARTNER_BASE);
    await page.getByRole('heading', { name: 'Partner', exact: true }).waitFor();
    expect(partnerSite?.requests.at(-1)).toBe('GET /');
  } finally {
    await context.close();
  }

  const done = await readProcess(process.uuid);
  expect(done.status).toBe('succeeded');
  expect(done.results?.organisation.uuid).toBe(organisationUuid);
  const read = await api('GET', `/organisations/${organisationUuid}`, undefined, await partnerToken());
  expect(read.status).toBe(200);
  await activeIntegration(organisationUuid);
}

describe('the hosted connect page in Chromium', { timeout: 120_000 }, () => {
  // A set-up failure (above all: no Chromium) fails every test with its message; thrown from
  // beforeAll it would only mark them skipped.
  let setupError: unknown;
  beforeAll(async () => {
    try {
      partnerSite = await startPartnerStandIn();
      const [started, launched] = await Promise.allSettled([startService(), launchChromium(partnerSite.port)]);
      if (started.status === 'fulfilled') service = started.value;
      if (launched.status === 'fulfilled') browser = launched.value;
      if (launched.status === 'rejected') throw launched.reason;
      if (started.status === 'rejected') throw started.reason;
    } catch (error) {
      setupError = error;
    }
  }, 120_000);

  beforeEach(() => {
    if (setupError) throw setupError;
  });

  afterAll(async () => {
    await browser?.close();
    await stopService(service);
    partnerSite?.server.close();
  }, 60_000);

  it('new user in de_CH: e-mail, prefilled form, password twice, then at the redirect target', async () => {
    await walkNewUser({
      locale: 'de_CH',
      email: 'anna.muster@example.org',
      firstName: 'Anna',
      lastName: 'Muster',
      organisation: {
        name: 'Tierhilfe Zürich',
        street: 'Seestrasse 12',
        postalCode: '8002',
        city: 'Zürich',
        bank: 'Zürcher Kantonalbank',
      },
      screenshots: true,
    });
  });

  it('new user in fr_CH, switching to English and back first: the redirect is kept', async () => {
    await walkNewUser({
      locale: 'fr_CH',
      email: 'luc.favre@example.org',
      firstName: 'Luc',
      lastName: 'Favre',
      organisation: {
        name: 'Association des Amis du Lac',
        street: 'Rue du Lac 5',
        postalCode: '1003',
        city: 'Lausanne',
        bank: 'Banque Cantonale Vaudoise',
      },
      switchLanguage: true,
    });
  });

  it('existing user in fr_CH: a wrong password is reported, then sign-in, pick and connect', async () => {
    await walkExistingUser({
      locale: 'fr_CH',
      email: 'claire.dubois@example.org',
      organisation: {
        name: 'Fondation Espoir',
        street: 'Avenue de la Gare 8',
        postalCode: '1950',
        city: 'Sion',
        bank: 'Banque Cantonale du Valais',
      },
      prefilled: true,
      screenshots: true,
    });
  });

  it('existing user in en_GB (from the browser language): sign-in, pick and connect', async () => {
    await walkExistingUser({
      locale: 'en_GB',
      email: 'sam.taylor@example.org',
      organisation: {
        name: 'Mountain Rescue Friends',
        street: 'Bergstrasse 3',
        postalCode: '3800',
        city: 'Interlaken',
        bank: 'Berner Kantonalbank',
      },
      prefilled: false,
      contextLocale: 'en-GB',
    });
  });

  it('existing user in de_CH, organisation still connected: refused (409) until the partner disconnects it', async () => {
    await walkExistingUser({
      locale: 'de_CH',
      email: 'beat.keller@example.org',
      organisation: {
        name: 'Bergbauernhilfe Graubünden',
        street: 'Poststrasse 4',
        postalCode: '7000',
        city: 'Chur',
        bank: 'Graubündner Kantonalbank',
      },
      prefilled: true,
      stillConnected: {
        message: 'Diese Organisation ist bereits mit Demo Partner CRM verbunden.',
      },
    });
  });

  it('without JavaScript, the new-user path works through plain form posts and 303 redirects', async () => {
    await walkNewUser({
      locale: 'it_CH',
      email: 'marco.rossi@example.org',
      firstName: 'Marco',
      lastName: 'Rossi',
      organisation: {
        name: 'Amici del Ticino',
        street: 'Via Nassa 7',
        postalCode: '6900',
        city: 'Lugano',
        bank: 'Banca dello Stato del Cantone Ticino',
      },
      javaScript: false,
    });
  });

  it('an unknown, a used and an expired link each show a clear page, never a stack trace', async () => {
    const used = await createProcess({ user: { email: 'used@example.org', locale: 'de_CH' } });
    const onboarded = await api('POST', `/onboarding/processes/token/${used.token}/onboard`, {
      user: { first_name: 'Used', last_name: 'Link', password: PASSWORD },
      organisation: organisationData({
        name: 'Used Link',
        street: 'Weg 1',
        postalCode: '3000',
        city: 'Bern',
        bank: 'Bank',
      }),
    });
    expect(onboarded.status).toBe(201);
    const expiring = await createProcess({ user: { email: 'late@example.org', locale: 'de_CH' } });

    const context = await newContext({ locale: 'de-CH' });
    try {
      const page = await context.newPage();
      const expectProblem = async (problem: 'unknown' | 'used' | 'expired', partner: boolean) => {
        expect(await page.locator('html').getAttribute('lang')).toBe('de-CH');
        expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(
          t('de_CH', `problem_${problem}_title`),
        );
        await page.getByText(t('de_CH', `problem_${problem}_text`)).waitFor();
        expect(await page.locator('form').count()).toBe(0);
        const text = await page.locator('body').textContent();
        expect(text).not.toMatch(/\bat \S+:\d+|Error:|node_modules|stack/i);
        const back = page.getByRole('link', { name: t('de_CH', 'return_to', { label: 'Demo Partner' }) });
        expect(await back.count()).toBe(partner ? 1 : 0);
        if (partner) expect(await back.getAttribute('href')).toBe(PARTNER_BASE);
      };

      const unknown = await page.goto(`${baseUrl()}/connect?token=no-such-token`);
      expect(unknown?.status()).toBe(404);
      await expectProblem('unknown', false);
      const none = await page.goto(`${baseUrl()}/connect`);
      expect(none?.status()).toBe(404);
      await expectProblem('unknown', false);

      const usedPage = await page.goto(pageUrl(used));
      expect(usedPage?.status()).toBe(409);
      await expectProblem('used', true);

      // Last in this file: the service clock moves past the link's lifetime of seven days.
      const clock = await api('POST', '/_local/clock', { advance_seconds: 8 * 86_400 });
      expect(clock.status).toBe(200);
      const expired = await page.goto(pageUrl(expiring));
      expect(expired?.status()).toBe(410);
      await expectProblem('expired', true);
    } finally {
      await context.close();
    }
  });
});
