import { createHash } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { advanceClock, definedFields, freezeClock, now } from '@svc/core';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { streamEvents } from '../../../test/support/stream';
import { processUploadedObject, ROWS_PER_PART } from './domain/processing';
import { processFileBatch } from './handlers/file-processor';
import { saveSourceConfiguration } from './repository/source-configuration-repository';
import { bucketName, s3 } from './storage/objects';
import { camt054Sample } from './testing/camt054-sample';
import { generateCsv } from './testing/csv-generator';
import { csvSample } from './testing/csv-sample';

const CAMT_CONFIGURATION = 'd0849dab-bc2f-40d7-81e8-0293a4b5c6d7';
const CSV_CONFIGURATION = 'e1950ebc-cd30-4e18-92a3-a4b5c6d7e8f9';
let token: string;
let otherToken: string;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver((_request, response) => {
    response.writeHead(200);
    response.end('ok');
  }, inject('receiverTls'));
  await seedDemo();
  await saveSourceConfiguration({
    uuid: CSV_CONFIGURATION,
    organisation_uuid: DEMO.org,
    name: 'PSP settlement (CSV)',
    file_type: 'csv',
  });
  token = await tokenFor(DEMO.client);
  otherToken = await tokenFor(DEMO.otherClient);
});

beforeEach(() => {
  freezeClock(now());
});

afterAll(async () => {
  await receiver.close();
});

const api = (method: string, path: string, as = token, body?: unknown) =>
  call(method, path, { token: as, ...definedFields({ body }) });

async function pay(value: number): Promise<{ uuid: string; amount_minor: number }> {
  const payment = await api('POST', '/payments', token, {
    account_uuid: DEMO.secondAccount,
    payment_method: 'card',
    profile: 'card',
    amount: { value: String(value), currency: 'CHF' },
    payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
  });
  expect(payment.status, payment.text).toBe(201);
  return { uuid: payment.json.uuid, amount_minor: value };
}

const today = () => new Date(now() * 1000).toISOString().slice(0, 10);

interface UploadParameters {
  inputs: Record<string, string>;
  attributes: { action: string; method: string; enctype: string };
  expires: number;
}

async function parametersFor(configuration: string): Promise<UploadParameters> {
  const response = await api('GET', `/reconciliation/source-configurations/${configuration}/upload-parameters`);
  expect(response.status, response.text).toBe(200);
  return response.json;
}

/** The browser's POST: the inputs as fields, then the file. */
async function upload(
  parameters: UploadParameters,
  name: string,
  content: string | Buffer,
  inputs = parameters.inputs,
) {
  const form = new FormData();
  for (const [field, value] of Object.entries(inputs)) form.append(field, value);
  form.append('file', new Blob([content]), name);
  return fetch(parameters.attributes.action, { method: 'POST', body: form });
}

/** The version the store made of `key` (S3's HeadObject: the current one). */
async function storedVersionOf(key: string): Promise<string> {
  const out = await (await s3()).send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
  if (!out.VersionId) throw new Error(`${key} has no version`);
  return out.VersionId;
}

async function settle() {
  const settled = await call('POST', '/_local/settle');
  expect(settled.status).toBe(200);
}

async function reportsOf(configuration: string) {
  const list = await api(
    'GET',
    `/reconciliation/reports?organisation_uuid=${DEMO.org}&source_configuration_uuid=${configuration}`,
  );
  expect(list.status, list.text).toBe(200);
  return list.json as Array<{ uuid: string; file: { name: string }; summary: Record<string, unknown> }>;
}

describe('upload parameters', () => {
  it('are a presigned POST pinned to the configuration’s prefix, for 15 minutes', async () => {
    const parameters = await parametersFor(CAMT_CONFIGURATION);
    expect(Object.keys(parameters.inputs).sort()).toEqual(
      expect.arrayContaining(['Policy', 'X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Signature', 'key']),
    );
    expect(parameters.attributes).toMatchObject({ method: 'POST', enctype: 'multipart/form-data' });
    expect(parameters.expires).toBe(now() + 900);
    const policy = JSON.parse(Buffer.from(parameters.inputs.Policy as string, 'base64').toString('utf8'));
    const prefix = `uploads/${DEMO.org}/${CAMT_CONFIGURATION}/`;
    expect(parameters.inputs.key).toMatch(new RegExp(`^${prefix}[0-9a-f-]{36}/\\$\\{filename\\}$`));
    expect(policy.conditions).toEqual(
      expect.arrayContaining([
        ['starts-with', '$key', (parameters.inputs.key as string).replace('${filename}', '')],
        ['content-length-range', 1, 100 * 1024 * 1024],
      ]),
    );
    expect(new Date(policy.expiration).getTime() / 1000).toBe(now() + 900);
  });

  it('are 404 for an unknown configuration and 403 without a grant on its organisation', async () => {
    const unknown = await api(
      'GET',
      '/reconciliation/source-configurations/00000000-0000-4000-8000-0000000000af/upload-parameters',
    );
    expect(unknown.status).toBe(404);
    const foreign = await api(
      'GET',
      `/reconciliation/source-configurations/${CAMT_CONFIGURATION}/upload-parameters`,
      otherToken,
    );
    expect(foreign.status).toBe(403);
  });
});

describe('uploading and processing', () => {
  it('matches a camt.054 notification against the organisation’s payments', async () => {
    const [single, qrBill, first, second] = [await pay(2500), await pay(4000), await pay(1000), await pay(12345)];
    const file = camt054Sample({
      single: single as { uuid: string; amount_minor: number },
      qrBill: qrBill as { uuid: string; amount_minor: number },
      batch: [first as { uuid: string; amount_minor: number }, { ...(second as { uuid: string }), amount_minor: 99 }],
      bookingDate: today(),
    });
    const stored = await upload(await parametersFor(CAMT_CONFIGURATION), 'camt054 März.xml', file);
    expect(stored.status, await stored.text()).toBe(204);
    await settle();
    const [report] = await reportsOf(CAMT_CONFIGURATION);
    expect(report?.file.name).toBe('camt054 März.xml');
    expect(report?.summary).toEqual({
      rows: 4,
      matched: 3,
      unmatched: 1,
      errors: 0,
      matched_amounts: [{ currency: 'CHF', value: '7500' }],
    });
    const full = await api('GET', `/reconciliation/reports/${report?.uuid}?size=10`);
    expect(full.json.rows.map((r: { outcome: string; payment_uuid?: string }) => [r.outcome, r.payment_uuid])).toEqual([
      ['matched', single?.uuid],
      ['matched', qrBill?.uuid],
      ['matched', first?.uuid],
      ['unmatched', second?.uuid],
    ]);
    expect(full.json.rows[3].reason).toBe('amount_mismatch');
    const events = (await streamEvents()).filter((e) => e.object_uuid === report?.uuid);
    expect(events.map((e) => [e.name, e.organisation_uuid])).toEqual([
      ['svc.reconciliation.reconciliation_report.created', DEMO.org],
    ]);
  });

  it('matches a CSV export, and reports a malformed file row by row', async () => {
    const [a, b, c] = [await pay(500), await pay(123456), await pay(7000)];
    const csv = csvSample({ first: a, second: b, third: c, bookingDate: today() }) as string;
    expect((await upload(await parametersFor(CSV_CONFIGURATION), 'psp.csv', csv)).status).toBe(204);
    const broken =
      'date,amount,currency,reference\n2026-13-40,12.00,CHF,x\n2026-01-02,abc,CHF,y\n2026-01-02,5.00,XXX,z\n';
    expect((await upload(await parametersFor(CSV_CONFIGURATION), 'broken.csv', broken)).status).toBe(204);
    await settle();
    const reports = await reportsOf(CSV_CONFIGURATION);
    const good = reports.find((r) => r.file.name === 'psp.csv');
    expect(good?.summary).toMatchObject({ matched: 3, errors: 0 });
    const bad = reports.find((r) => r.file.name === 'broken.csv');
    expect(bad?.summary).toMatchObject({ rows: 3, matched: 0, errors: 3 });
    const rows = (await api('GET', `/reconciliation/reports/${bad?.uuid}`)).json.rows;
    expect(rows.map((r: { row: number; outcome: string }) => [r.row, r.outcome])).toEqual([
      [2, 'error'],
      [3, 'error'],
      [4, 'error'],
    ]);
  });

  it('gives one report for a file notified twice, whoever processes it', async () => {
    const content = 'date,amount,currency,reference\n';
    const parameters = await parametersFor(CSV_CONFIGURATION);
    expect((await upload(parameters, 'twice.csv', content)).status).toBe(204);
    await settle();
    const key = (parameters.inputs.key as string).replace('${filename}', 'twice.csv');
    // The notification S3 sends again names the same version as the first (the bucket is versioned).
    const versionId = await storedVersionOf(key);
    const notification = {
      Records: [
        {
          eventName: 'ObjectCreated:Post',
          s3: {
            object: { key: encodeURIComponent(key), eTag: createHash('md5').update(content).digest('hex'), versionId },
          },
        },
      ],
    };
    const message = { messageId: 'm', body: JSON.stringify(notification) } as SQSRecord;
    const again = await Promise.all([
      processFileBatch({ Records: [message] }),
      processFileBatch({ Records: [message] }),
    ]);
    expect(again.map((r) => [r.processed, r.response.batchItemFailures.length])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    const reports = (await reportsOf(CSV_CONFIGURATION)).filter((r) => r.file.name === 'twice.csv');
    expect(reports).toHaveLength(1);
    const direct = await processUploadedObject(key, createHash('md5').update(content).digest('hex'), versionId);
    expect(direct).toMatchObject({ created: false, report: { uuid: reports[0]?.uuid } });
  });

  it('is refused by the local store once the policy has expired, and nothing is processed', async () => {
    const parameters = await parametersFor(CSV_CONFIGURATION);
    advanceClock(901);
    const late = await upload(parameters, 'late.csv', 'date,amount,currency,reference\n');
    expect(late.status).toBe(403);
    expect(await late.text()).toContain('Policy expired');
    await settle();
    expect((await reportsOf(CSV_CONFIGURATION)).some((r) => r.file.name === 'late.csv')).toBe(false);
  });

  it('is refused outside the prefix, with a tampered policy or when too large', async () => {
    const parameters = await parametersFor(CSV_CONFIGURATION);
    const outside = await upload(parameters, 'x.csv', 'a', {
      ...parameters.inputs,
      key: `uploads/${DEMO.otherOrg}/x.csv`,
    });
    expect(outside.status).toBe(403);
    const policy = JSON.parse(Buffer.from(parameters.inputs.Policy as string, 'base64').toString('utf8'));
    policy.conditions = policy.conditions.map((c: unknown) =>
      Array.isArray(c) && c[0] === 'starts-with' ? ['starts-with', '$key', 'uploads/'] : c,
    );
    const tampered = await upload(parameters, 'x.csv', 'a', {
      ...parameters.inputs,
      Policy: Buffer.from(JSON.stringify(policy)).toString('base64'),
      key: `uploads/${DEMO.otherOrg}/x.csv`,
    });
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('SignatureDoesNotMatch');
    const empty = await upload(parameters, 'empty.csv', '');
    expect(empty.status).toBe(400);
  });
});

describe('file names, lost files and long reports', () => {
  it('keeps names with %, + and accents as sent', async () => {
    for (const name of ['Abrechnung 100%.csv', 'a+b März.csv']) {
      expect(
        (await upload(await parametersFor(CSV_CONFIGURATION), name, 'date,amount,currency,reference\n')).status,
      ).toBe(204);
    }
    await settle();
    const names = (await reportsOf(CSV_CONFIGURATION)).map((r) => r.file.name);
    expect(names).toEqual(expect.arrayContaining(['Abrechnung 100%.csv', 'a+b März.csv']));
  });

  it('acknowledges the notification of a file that is gone, without a report', async () => {
    const key = `uploads/${DEMO.org}/${CSV_CONFIGURATION}/00000000-0000-4000-8000-0000000000b1/gone.csv`;
    const message = {
      messageId: 'gone',
      body: JSON.stringify({
        Records: [{ eventName: 'ObjectCreated:Put', s3: { object: { key: encodeURIComponent(key), eTag: 'abc' } } }],
      }),
    } as SQSRecord;
    const result = await processFileBatch({ Records: [message] });
    expect(result).toEqual({ response: { batchItemFailures: [] }, processed: 0 });
  });

  it('pages the rows of a report across its parts', async () => {
    const rows = ROWS_PER_PART + 1500;
    const chunks: Buffer[] = [];
    for await (const chunk of generateCsv(rows)) chunks.push(Buffer.from(chunk));
    const stored = await upload(await parametersFor(CSV_CONFIGURATION), 'long.csv', Buffer.concat(chunks));
    expect(stored.status).toBe(204);
    await settle();
    const report = (await reportsOf(CSV_CONFIGURATION)).find((r) => r.file.name === 'long.csv');
    expect(report?.summary.rows).toBe(rows);
    const page = await api('GET', `/reconciliation/reports/${report?.uuid}?from=${ROWS_PER_PART - 2}&size=4`);
    expect(page.json.rows.map((r: { row: number }) => r.row)).toEqual(
      [ROWS_PER_PART - 1, ROWS_PER_PART, ROWS_PER_PART + 1, ROWS_PER_PART + 2].map((n) => n + 1),
    );
    const last = await api('GET', `/reconciliation/reports/${report?.uuid}?from=${rows - 1}&size=10`);
    expect(last.json.rows).toHaveLength(1);
  }, 120_000);
});

describe('the deprecated blueprint execution', () => {
  it('stores and processes each file of filename[] and answers 202 with Deprecation and Sunset', async () => {
    const payment = await pay(3300);
    const form = new FormData();
    form.append(
      'filename[]',
      new Blob([`date,amount,currency,reference\n${today()},33.00,CHF,${payment.uuid}\n`]),
      'a.csv',
    );
    form.append('filename[]', new Blob(['date,amount,currency,reference\n']), 'b.csv');
    const request = new Request('http://x', { method: 'POST', body: form });
    const body = Buffer.from(await request.arrayBuffer());
    const response = await call('POST', `/reconciliation/blueprints/${CSV_CONFIGURATION}/execute`, {
      token,
      rawBody: body,
      headers: { 'content-type': request.headers.get('content-type') as string },
    });
    expect(response.status, response.text).toBe(202);
    expect(response.headers.deprecation).toBe('true');
    expect(response.headers.sunset).toMatch(/GMT$/);
    expect(response.json.files).toHaveLength(2);
    await settle();
    const [first] = response.json.files;
    const report = await api('GET', `/reconciliation/reports/${first.report_uuid}`);
    expect(report.status, report.text).toBe(200);
    expect(report.json.summary).toMatchObject({ rows: 1, matched: 1 });
    const foreign = await call('POST', `/reconciliation/blueprints/${CSV_CONFIGURATION}/execute`, {
      token: otherToken,
      rawBody: body,
      headers: { 'content-type': request.headers.get('content-type') as string },
    });
    expect(foreign.status).toBe(403);
    const json = await api('POST', `/reconciliation/blueprints/${CSV_CONFIGURATION}/execute`, token, { filename: 'x' });
    expect(json.status).toBe(415);
  });

  it('is 404 for an unknown blueprint and 400 without files', async () => {
    const multipart = async (form: FormData, blueprint: string) => {
      const request = new Request('http://x', { method: 'POST', body: form });
      return call('POST', `/reconciliation/blueprints/${blueprint}/execute`, {
        token,
        rawBody: Buffer.from(await request.arrayBuffer()),
        headers: { 'content-type': request.headers.get('content-type') as string },
      });
    };
    const withFile = new FormData();
    withFile.append('filename[]', new Blob(['date,amount,currency,reference\n']), 'a.csv');
    expect((await multipart(withFile, '00000000-0000-4000-8000-0000000000b2')).status).toBe(404);
    const noFile = new FormData();
    noFile.append('note', 'no file here');
    const refused = await multipart(noFile, CSV_CONFIGURATION);
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0]).toMatchObject({ property: 'filename[]', code: 'error.validation.not_blank' });
    const empty = new FormData();
    empty.append('filename[]', new Blob([]), 'empty.csv');
    expect((await multipart(empty, CSV_CONFIGURATION)).status).toBe(400);
  });

  it('takes long unicode names and replays a retry with the same idempotency key', async () => {
    const send = async (key: string) => {
      const form = new FormData();
      form.append('filename[]', new Blob(['date,amount,currency,reference\n']), `a${'😀'.repeat(150)}.csv`);
      const request = new Request('http://x', { method: 'POST', body: form });
      return call('POST', `/reconciliation/blueprints/${CSV_CONFIGURATION}/execute`, {
        token,
        rawBody: Buffer.from(await request.arrayBuffer()),
        headers: { 'content-type': request.headers.get('content-type') as string, 'idempotency-key': key },
      });
    };
    const first = await send('blueprint-retry-1');
    expect(first.status, first.text).toBe(202);
    const retry = await send('blueprint-retry-1');
    expect(retry.status).toBe(202);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json).toEqual(first.json);
  });
});

describe('the report event', () => {
  it('reaches a subscribed webhook with the report summary as data', async () => {
    const hook = await api('POST', '/webhooks', token, {
      organisation_uuid: DEMO.org,
      endpoint: `https://127.0.0.1:${receiver.port}/reports`,
    });
    expect(hook.status, hook.text).toBe(201);
    const subscription = await api('POST', '/event-subscriptions', token, {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: hook.json.uuid,
      action_type: 'webhook',
      event_name: 'svc.reconciliation.reconciliation_report.created',
    });
    expect(subscription.status, subscription.text).toBe(201);
    const payment = await pay(4200);
    const csv = `date,amount,currency,reference\n${today()},42.00,CHF,${payment.uuid}\n`;
    expect((await upload(await parametersFor(CSV_CONFIGURATION), 'hooked.csv', csv)).status).toBe(204);
    await settle();
    const delivered = receiver.requests
      .filter((r) => r.url === '/reports')
      .map((r) => JSON.parse(r.body).event)
      .find((e) => e.data.file.name === 'hooked.csv');
    expect(delivered).toMatchObject({
      name: 'svc.reconciliation.reconciliation_report.created',
      object: 'reconciliation_report',
      organisation_uuid: DEMO.org,
      data: { summary: { rows: 1, matched: 1, matched_amounts: [{ currency: 'CHF', value: '4200' }] } },
    });
    expect(delivered.data.rows).toBeUndefined();
  });
});
