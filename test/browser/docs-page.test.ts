import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_NAMES } from '@svc/events';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, SCREENSHOTS, type Service, startService, stopService } from './support';

/**
 * `/docs` in a real browser, offline: the local service as `pnpm start` runs it and Debian's
 * Chromium with every request to another origin refused and recorded. The reference must render
 * every operation grouped by domain with its schemas and examples, and the events; its screenshot is
 * docs/screenshots/api-reference.png (shown in the README).
 */
let service: Service | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  [service, browser] = await Promise.all([startService(), launchChromium()]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopService(service);
}, 60_000);

describe('the API reference at /docs', () => {
  it('renders every domain, a payment operation with its schemas, and the events, with no other origin reached', async () => {
    if (!service || !browser) throw new Error('The service or the browser did not start');
    const origin = service.url;
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    const elsewhere: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${origin}/docs`);
    // Every domain is a section of its own.
    for (const tag of ['Payments', 'Subscriptions', 'Webhooks', 'Organisations', 'Identity']) {
      await expect.poll(() => page.locator(`.opblock-tag[data-tag="${tag}"]`).count(), { timeout: 20_000 }).toBe(1);
    }
    // Every operation of the description is there (collapsed).
    const described = await page.evaluate(async () => {
      const document = (await (await fetch('/openapi.json')).json()) as { paths: Record<string, object> };
      return Object.values(document.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    });
    await expect.poll(() => page.locator('.opblock-tag-section .opblock').count(), { timeout: 20_000 }).toBe(described);
    // A payment operation, opened: the example request and answers taken from the contract tests,
    // the errors it answers, then its request body and its 201 response with a schema.
    const initialise = page.locator('#operations-Payments-initialisePayment');
    await initialise.locator('.opblock-summary').first().click();
    await expect.poll(() => initialise.locator('.responses-table .response[data-code="201"]').count()).toBe(1);
    for (const code of ['400', '401', '403', '404']) {
      expect(await initialise.locator(`.responses-table .response[data-code="${code}"]`).count(), code).toBe(1);
    }
    const examples = (await initialise.textContent()) ?? '';
    expect(examples).toContain('4242424242424242');
    expect(examples).toMatch(/"last4":\s*"4242"/);
    expect(examples).toContain('error.validation.not_valid');
    await initialise.getByText('Schema', { exact: true }).first().click();
    await expect.poll(() => initialise.locator('.model-box').count()).toBeGreaterThan(0);
    expect(await initialise.textContent()).toContain('svc_parameters');
    // Back to the example, for the screenshot.
    await initialise.getByText('Example Value', { exact: true }).first().click();
    // The events, as OpenAPI 3.1 webhooks: every one listed.
    const events = page.locator('.webhooks');
    const text = (await events.textContent()) ?? '';
    for (const name of EVENT_NAMES) expect(text, name).toContain(name);
    // One event opened: its signature headers and the envelope with the payment as `data`.
    const succeeded = events.locator('.opblock', { hasText: 'svc.payments.payment.succeeded' }).first();
    await succeeded.locator('.opblock-summary').first().click();
    await expect.poll(async () => (await succeeded.textContent()) ?? '').toContain('X-Svc-Signature');
    await initialise.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'api-reference.png'), animations: 'disabled' });
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
