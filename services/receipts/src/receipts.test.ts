import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freezeClock } from '@svc/core';
import { DateTime } from 'luxon';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { streamEvents } from '../../../test/support/stream';
import { mailTo, PORTAL_SETTINGS_ON, redeem } from '../../portal/src/testing-portal';
import { renderReceiptPdf } from './documents';
import { runBatchPage } from './domain/batches';
import { bySupporter, giftsOfOrganisation } from './domain/gifts';
import { issueReceipts, receiptContent, yearBounds } from './domain/issue';
import { documentOf } from './domain/pdf';
import { requireSettings } from './domain/settings';

/**
 * Receipts end to end through the API and the local background work (contract section 13): the
 * year's gifts of each supporter, less refunds, numbered in sequence without gaps, one valid
 * receipt per supporter and year however batches race, a replacement when money goes back
 * after issue, and the PDF.
 */
interface Receipt {
  uuid: string;
  number: string;
  supporter_uuid: string;
  status: string;
  payments: string[];
  gifts: Array<{ date: string }>;
  total: { value: string; currency: string };
  replaced_by?: string;
}

/** The service clock for the tests (the test environment lets it run again after each test). */
let clock = 0;
let token = '';
/** Moves the service clock to a Zurich wall-clock time, with a token valid then. */
async function at(iso: string) {
  clock = Math.floor(DateTime.fromISO(iso, { zone: 'Europe/Zurich' }).toSeconds());
  freezeClock(clock);
  token = await tokenFor(DEMO.client);
}
beforeEach(() => {
  if (clock) freezeClock(clock);
});

async function api(method: string, path: string, body?: unknown) {
  return call(method, path, { token, ...(body === undefined ? {} : { body }) });
}
async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}
async function settle() {
  const response = await call('POST', '/_local/settle', { body: {} });
  expect(response.status).toBe(200);
}

const SETTINGS = {
  country: 'CH',
  legal_name: 'Stiftung Beispiel',
  address: { line1: 'Seestrasse 1', postal_code: '8002', city: 'Zürich', country: 'CH' },
  tax_exemption_reference: 'Kantonales Steueramt Zürich, Verfügung vom 1. März 2019',
  signatory: 'Anna Muster, Präsidentin',
  min_total: 5000,
};

/** A card payment in CHF of a new supporter, or of `supporterUuid`. */
async function give(amount: number, supporterUuid?: string, email = 'donor@example.org') {
  return ok(
    'POST',
    '/payments',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: String(amount), currency: 'CHF' },
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      ...(supporterUuid
        ? { supporter: { uuid: supporterUuid } }
        : {
            create_supporter: true,
            supporter: {
              first_name: 'Erika',
              last_name: 'Muster',
              street: 'Bahnhofstrasse',
              house_number: '5',
              postal_code: '8001',
              city: 'Zürich',
              country: 'CH',
              email,
            },
          }),
    },
    201,
  );
}

async function runBatch(year: number, extra: Record<string, unknown> = {}) {
  const batch = await ok('POST', '/receipt-batches', { organisation_uuid: DEMO.org, year, ...extra }, 202);
  await settle();
  return ok('GET', `/receipt-batches/${batch.uuid}`);
}

beforeAll(async () => {
  await seedDemo();
  // The local queues and object store start with the background work.
  await settle();
  await at('2025-03-01T10:00');
});

describe('receipt settings', () => {
  it('are 404 until set, refuse bad input whole, and answer what was put', async () => {
    expect((await api('GET', `/organisations/${DEMO.org}/receipt-settings`)).status).toBe(404);
    const bad = await api('PUT', `/organisations/${DEMO.org}/receipt-settings`, { ...SETTINGS, country: 'DE' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message.map((m: { property: string }) => m.property)).toContain('germany');
    expect(
      (await api('PUT', `/organisations/${DEMO.org}/receipt-settings`, { ...SETTINGS, min_total: -1 })).status,
    ).toBe(400);
    expect((await api('GET', `/organisations/${DEMO.org}/receipt-settings`)).status).toBe(404);
    expect(await ok('PUT', `/organisations/${DEMO.org}/receipt-settings`, SETTINGS)).toEqual(SETTINGS);
    expect(await ok('GET', `/organisations/${DEMO.org}/receipt-settings`)).toEqual(SETTINGS);
  });

  it('a batch needs a year that is over', async () => {
    const refused = await api('POST', '/receipt-batches', { organisation_uuid: DEMO.org, year: 2025 });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].code).toBe('error.receipts.year_not_over');
  });
});

describe('a year of gifts', () => {
  const donors = { erika: '', hans: '', lena: '', otto: '' };
  let receipts: Receipt[] = [];

  it('issues one receipt per supporter over min_total, numbered without gaps, totals less refunds', async () => {
    // Erika: 30.00 + 25.50 − 10.00 refunded = 45.50, under 50.00: no receipt.
    const erika = await give(3000);
    donors.erika = erika.supporter_uuid;
    await give(2550, donors.erika);
    await ok('POST', `/payments/${erika.uuid}/refunds`, { amount: { value: '1000', currency: 'CHF' } });
    // Hans: 40.00 + 20.00 = 60.00. Lena: 120.00. Otto: 50.00 exactly (at min_total).
    const hans = await give(4000);
    donors.hans = hans.supporter_uuid;
    await give(2000, donors.hans);
    donors.lena = (await give(12000)).supporter_uuid;
    donors.otto = (await give(5000)).supporter_uuid;
    // A gift of the next year is on no receipt of this one.
    await at('2026-01-02T09:00');
    await give(9900, donors.lena);
    await at('2026-02-01T09:00');

    const batch = await runBatch(2025);
    expect(batch).toMatchObject({
      status: 'completed',
      year: 2025,
      counts: { supporters: 4, issued: 3, below_min_total: 1, already_issued: 0 },
    });
    receipts = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2025`);
    expect(receipts.map((r) => r.number)).toEqual(['2025-000001', '2025-000002', '2025-000003']);
    const bySupporterUuid: Record<string, Receipt> = Object.fromEntries(receipts.map((r) => [r.supporter_uuid, r]));
    expect(bySupporterUuid[donors.hans]?.total).toEqual({ value: '6000', currency: 'CHF' });
    expect(bySupporterUuid[donors.hans]?.payments).toHaveLength(2);
    expect(bySupporterUuid[donors.lena]?.total).toEqual({ value: '12000', currency: 'CHF' });
    expect(bySupporterUuid[donors.otto]?.total).toEqual({ value: '5000', currency: 'CHF' });
    expect(bySupporterUuid[donors.erika]).toBeUndefined();
    expect(receipts.every((r) => r.status === 'issued' && r.gifts.every((g) => g.date.startsWith('2025-')))).toBe(true);
  });

  it('takes a batch sent twice with one Idempotency-Key once', async () => {
    const headers = { 'idempotency-key': `batch-${Date.now()}` };
    const body = { organisation_uuid: DEMO.org, year: 2025 };
    const first = await call('POST', '/receipt-batches', { token, body, headers });
    const again = await call('POST', '/receipt-batches', { token, body, headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.json.uuid).toBe(first.json.uuid);
    await settle();
  });

  it('runs again without issuing anyone a second receipt', async () => {
    const again = await runBatch(2025);
    expect(again.counts).toMatchObject({ supporters: 4, issued: 0, already_issued: 3, below_min_total: 1 });
    expect(await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2025`)).toHaveLength(3);
  });

  it('serves the PDF and a supporter’s receipts', async () => {
    const hans = receipts.find((r) => r.supporter_uuid === donors.hans) as Receipt;
    const pdf = await call('GET', `/receipts/${hans.uuid}/pdf`, { token });
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const bytes = pdf.bytes;
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const dir = join(process.cwd(), '.test-results', 'receipts');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'api-receipt-ch.pdf');
    writeFileSync(file, bytes);
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    expect(text).toContain('2025-000001'.slice(0, 5));
    expect(text).toContain(hans.number);
    expect(text).toContain('Stiftung Beispiel');
    expect(text).toContain('60.00');
    const mine = await ok('GET', `/receipts?supporter_uuid=${donors.hans}`);
    expect(mine.map((r: { uuid: string }) => r.uuid)).toEqual([hans.uuid]);
  });

  it('voids and replaces a receipt when money goes back after issue, with the next number', async () => {
    const hans = receipts.find((r) => r.supporter_uuid === donors.hans) as Receipt;
    await ok('POST', `/payments/${hans.payments[0]}/refunds`, { amount: { value: '500', currency: 'CHF' } });
    await settle();
    const old = await ok('GET', `/receipts/${hans.uuid}`);
    expect(old).toMatchObject({ status: 'voided', void_reason: 'replaced' });
    const replacement = await ok('GET', `/receipts/${old.replaced_by}`);
    expect(replacement).toMatchObject({
      status: 'issued',
      number: '2025-000004',
      replaces: hans.uuid,
      supporter_uuid: donors.hans,
      total: { value: '5500', currency: 'CHF' },
    });
    // Voided ones stay listed; one valid receipt per supporter.
    const listed = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2025`);
    expect(listed).toHaveLength(4);
    expect(listed.filter((r: Receipt) => r.supporter_uuid === donors.hans && r.status === 'issued')).toHaveLength(1);
    // The void one's document says so.
    const pdf = await call('GET', `/receipts/${hans.uuid}/pdf`, { token });
    expect(pdf.status).toBe(200);
    // The events the contract names: the old one issued then voided, its replacement issued.
    const events = (await streamEvents()).filter((event) => event.object === 'receipt');
    const of = (uuid: string) => events.filter((event) => event.object_uuid === uuid).map((event) => event.name);
    expect(of(hans.uuid)).toEqual(['svc.receipts.receipt.issued', 'svc.receipts.receipt.voided']);
    expect(of(old.replaced_by)).toEqual(['svc.receipts.receipt.issued']);
    expect(events.every((event) => event.organisation_uuid === DEMO.org)).toBe(true);
  });

  it('voids one by hand; the next batch issues the supporter a new one', async () => {
    const otto = receipts.find((r) => r.supporter_uuid === donors.otto) as Receipt;
    expect(await ok('POST', `/receipts/${otto.uuid}/void`, { reason: 'wrong address' })).toMatchObject({
      status: 'voided',
      void_reason: 'wrong address',
    });
    const batch = await runBatch(2025);
    expect(batch.counts).toMatchObject({ issued: 1, already_issued: 2 });
    const valid = (await ok('GET', `/receipts?supporter_uuid=${donors.otto}`)).filter(
      (r: Receipt) => r.status === 'issued',
    );
    expect(valid).toHaveLength(1);
    expect(valid[0].number).toBe('2025-000005');
  });

  it('is refused to callers without a grant, and unknown receipts are 404', async () => {
    const other = await call('GET', `/receipts/${receipts[0]?.uuid}`, {});
    expect(other.status).toBe(401);
    expect((await api('GET', '/receipts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api('GET', '/receipts?year=2025')).status).toBe(400);
  });
});

describe('delivery', () => {
  it('mails each receipt with its PDF when the batch sends e-mail, once, and counts those without an address', async () => {
    await at('2022-05-01T10:00');
    const email = `mailed-${Date.now()}@example.org`;
    const mailed = await give(8000, undefined, email);
    await give(1500, mailed.supporter_uuid);
    // A supporter without an e-mail: receipted, not mailed.
    const silent = await ok(
      'POST',
      '/supporters',
      { organisation_uuid: DEMO.org, first_name: 'Stefan', last_name: 'Still', city: 'Bern' },
      201,
    );
    await give(9000, silent.uuid);
    await at('2023-01-15T10:00');
    const batch = await runBatch(2022, { send_email: true });
    expect(batch.counts).toMatchObject({ issued: 2, emailed: 1, without_email: 1 });
    const [receipt] = (await ok('GET', `/receipts?supporter_uuid=${mailed.supporter_uuid}`)) as Receipt[];
    const mails = await mailTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toContain('2022');
    expect(mails[0]?.text).toContain(receipt?.number);
    expect(mails[0]?.text).toMatch(/95[.,]00/);
    const attachments = (
      mails[0] as unknown as { attachments: Array<{ filename: string; content_type: string; size: number }> }
    ).attachments;
    expect(attachments).toEqual([
      expect.objectContaining({ filename: `receipt-${receipt?.number}.pdf`, content_type: 'application/pdf' }),
    ]);
    expect(attachments[0]?.size).toBeGreaterThan(5000);
    // Run again: nothing issued, nothing mailed twice.
    await runBatch(2022, { send_email: true });
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('lists the donor’s receipts in the portal, serves their PDFs, and no one else’s', async () => {
    await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, PORTAL_SETTINGS_ON);
    const mine = (await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2022`)) as Receipt[];
    const donor = mine.find((r) => r.total.value === '9500') as Receipt;
    const other = mine.find((r) => r.uuid !== donor.uuid) as Receipt;
    const link = await ok('POST', `/supporters/${donor.supporter_uuid}/portal-links`, { flow: 'manage' }, 201);
    const url = new URL(link.url);
    const { session } = await redeem(`${url.pathname}${url.search}`);
    expect(session).toBeDefined();
    const cookie = { cookie: session as string };
    const home = await call('GET', '/portal/home', { headers: cookie });
    expect(home.status).toBe(200);
    expect(home.text).toContain(`/portal/receipts/${donor.uuid}/pdf`);
    expect(home.text).not.toContain(other.uuid);
    const listed = await call('GET', '/portal/api/receipts', { headers: cookie });
    expect(listed.status).toBe(200);
    expect(listed.json.map((r: Receipt) => r.uuid)).toEqual([donor.uuid]);
    // Voided now: its void document is made at this first ask, by the portal's own function.
    await ok('POST', `/receipts/${donor.uuid}/void`, { reason: 'wrong name' });
    const voidedHome = await call('GET', '/portal/home', { headers: cookie });
    expect(voidedHome.text).toContain('void (replaced or withdrawn)');
    const pdf = await call('GET', `/portal/receipts/${donor.uuid}/pdf`, { headers: cookie });
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect((await call('GET', `/portal/receipts/${other.uuid}/pdf`, { headers: cookie })).status).toBe(404);
    expect((await call('GET', `/portal/receipts/${donor.uuid}/pdf`)).status).toBe(401);
  });
});

describe('racing batches', () => {
  it('never issue a supporter two receipts, and leave no gap in the numbers', async () => {
    await at('2024-06-01T10:00');
    for (let i = 0; i < 12; i++) await give(6000 + i);
    await at('2025-02-01T10:00');
    const batches = await Promise.all(
      [1, 2, 3].map(() => ok('POST', '/receipt-batches', { organisation_uuid: DEMO.org, year: 2024 }, 202)),
    );
    // Three workers at once, page by page, as three Lambda invocations would run them.
    await Promise.all(
      batches.map(async (batch) => {
        while (await runBatchPage(batch.uuid, 3));
      }),
    );
    await settle();
    const listed = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2024`);
    expect(listed).toHaveLength(12);
    expect(new Set(listed.map((r: Receipt) => r.supporter_uuid)).size).toBe(12);
    expect(listed.map((r: Receipt) => r.number)).toEqual(
      Array.from({ length: 12 }, (_, i) => `2024-${String(i + 1).padStart(6, '0')}`),
    );
  });

  it('pages an organisation’s year in number order', async () => {
    const first = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2024&size=5`);
    expect(first.map((r: Receipt) => r.number)).toEqual([1, 2, 3, 4, 5].map((n) => `2024-00000${n}`));
    const next = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2024&size=5&after=2024-000005`);
    expect(next.map((r: Receipt) => r.number)).toEqual([
      '2024-000006',
      '2024-000007',
      '2024-000008',
      '2024-000009',
      '2024-000010',
    ]);
    expect((await api('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2024&size=0`)).status).toBe(400);
    expect((await api('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2024&after=12`)).status).toBe(400);
  });

  it('a page message delivered twice is worked once: the batch’s counts are not doubled', async () => {
    await at('2021-06-01T10:00');
    for (let i = 0; i < 3; i++) await give(6100 + i);
    await at('2022-01-10T10:00');
    const batch = await ok('POST', '/receipt-batches', { organisation_uuid: DEMO.org, year: 2021 }, 202);
    // The same message twice at once (SQS delivers at least once), then the rest of the chain.
    const [a, b] = await Promise.all([runBatchPage(batch.uuid, 10), runBatchPage(batch.uuid, 10)]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    await settle();
    const done = await ok('GET', `/receipt-batches/${batch.uuid}`);
    expect(done).toMatchObject({ status: 'completed', counts: { supporters: 3 } });
    // Whichever copy moved the batch on counted the page: each supporter once, issued or found issued.
    expect(done.counts.issued + done.counts.already_issued).toBe(3);
    expect(await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2021`)).toHaveLength(3);
  });

  it('a batch that died after issuing a page resumes without issuing it twice', async () => {
    await at('2023-06-01T10:00');
    for (let i = 0; i < 5; i++) await give(7000 + i);
    await at('2024-01-10T10:00');
    // The first page issued, then the worker died before moving the batch's cursor.
    const settings = await requireSettings(DEMO.org);
    const { from, to } = yearBounds(settings, 2023);
    const first = (await giftsOfOrganisation(DEMO.org, from, to, undefined, 2).next()).value ?? [];
    const drafts = bySupporter(first).map((gifts) => {
      const content = receiptContent(settings, gifts);
      return {
        supporter_uuid: gifts[0]?.supporter_uuid as string,
        currency: 'CHF',
        total: content.total,
        gifts: content.gifts,
      };
    });
    expect((await issueReceipts(settings, 2023, drafts)).issued).toHaveLength(2);
    const batch = await runBatch(2023);
    expect(batch.counts).toMatchObject({ supporters: 5, issued: 3, already_issued: 2 });
    const listed = await ok('GET', `/receipts?organisation_uuid=${DEMO.org}&year=2023`);
    expect(listed.map((r: Receipt) => r.number)).toEqual([1, 2, 3, 4, 5].map((n) => `2023-00000${n}`));
  });
});

describe('a German receipt', () => {
  it('is made from German settings and the supporter as the official model wants it', async () => {
    const germany = {
      purposes: 'der Jugendhilfe',
      tax_office: 'Berlin für Körperschaften I',
      basis: 'exemption_notice' as const,
      decision_date: '2024-03-14',
      assessment_period: '2020 bis 2022',
      machine_receipts_notified_on: '2023-11-02',
    };
    const settings = {
      organisation_uuid: DEMO.org,
      country: 'DE' as const,
      legal_name: 'Kinderhilfe Nordstadt e. V.',
      address: { line1: 'Lindenallee 7', postal_code: '10115', city: 'Berlin', country: 'DE' },
      tax_exemption_reference: '27/640/12345',
      signatory: 'Dr. Petra Schulz',
      min_total: 0,
      germany,
      version: 1,
      updated: 0,
    };
    const { assessment_period: _period, ...withoutPeriod } = germany;
    const refused = await api('PUT', `/organisations/${DEMO.org}/receipt-settings`, {
      ...SETTINGS,
      country: 'DE',
      germany: withoutPeriod,
    });
    expect(refused.status).toBe(400);
    const supporter = await ok(
      'POST',
      '/supporters',
      {
        organisation_uuid: DEMO.org,
        first_name: 'Max',
        last_name: 'Müßig',
        street: 'Gartenweg',
        house_number: '3',
        postal_code: '20095',
        city: 'Hamburg',
      },
      201,
    );
    const receipt = {
      uuid: '11111111-1111-4111-8111-111111111111',
      organisation_uuid: DEMO.org,
      supporter_uuid: supporter.uuid as string,
      year: 2025,
      sequence: 7,
      country: 'DE' as const,
      total_minor: 123456,
      currency: 'EUR',
      status: 'issued' as const,
      gifts: [
        { payment_uuid: 'a', date: '2025-03-01', amount_minor: 100000 },
        { payment_uuid: 'b', date: '2025-11-30', amount_minor: 23456 },
      ],
      issued_at: 1_768_000_000,
      version: 1,
      event_sequence: 1,
      events: [],
    };
    const bytes = await renderReceiptPdf(await documentOf(receipt, settings));
    const dir = join(process.cwd(), '.test-results', 'receipts');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'api-receipt-de.pdf');
    writeFileSync(file, bytes);
    const text = execFileSync('pdftotext', ['-raw', file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(text).toContain('Sammelbestätigung über Geldzuwendungen');
    expect(text).toContain('Max Müßig');
    expect(text).toContain('1.234,56');
    expect(text).toContain('eintausendzweihundertvierunddreißig Euro sechsundfünfzig Cent');
    expect(text).toContain('2025-000007');
    expect(text).toContain('keine weiteren Bestätigungen');
  });
});
