import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_NAMES } from '@svc/events';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, SCREENSHOTS, type Service, startService, stopService } from './support';

/**
 * `/docs` in a real browser, offline: the local service as `pnpm start` runs it and Debian's
 * Chromium with every request to another origin refused and recorded. The reference must render
 * the operations grouped by domain with their schemas, and the events; its screenshot is
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
    // A payment operation, opened: its request body and its 201 response with a schema.
    const initialise = page.locator('#operations-Payments-initialisePayment');
    await initialise.locator('.opblock-summary').first().click();
    await expect.poll(() => initialise.locator('.responses-table .response[data-code="201"]').count()).toBe(1);
    await initialise.getByText('Schema', { exact: true }).first().click();
    await expect.poll(() => initialise.locator('.model-box').count()).toBeGreaterThan(0);
    expect(await initialise.textContent()).toContain('svc_parameters');
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
