import { marshall } from '@aws-sdk/util-dynamodb';
import { SEARCH_PROJECTIONS } from '@svc/api';
import { findPayment, type PaymentRecord, paymentItem } from '@svc/payments';
import { searchDb, streamProjector } from '@svc/sql';
import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * The search engine as a projection of the table: rows follow writes at once (read-your-writes),
 * the stream projector never moves a row backwards whatever order and repetition its records
 * come in, and with the engine down payments are still taken, searches answer 503, and the
 * stream fills the rows in once it is back.
 */
const projectStreamRecords = streamProjector(SEARCH_PROJECTIONS);
let token: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
});

const ENGINE_DOWN = {
  SVC_SEARCH_CLUSTER_ARN: 'arn:aws:rds:eu-central-2:000000000000:cluster:svc-down',
  SVC_SEARCH_SECRET_ARN: 'arn:aws:secretsmanager:eu-central-2:000000000000:secret:svc-down',
  // Nothing listens there: every Data API call is refused at once.
  AWS_ENDPOINT_URL_RDS_DATA: 'http://127.0.0.1:9',
};

afterEach(() => {
  for (const name of Object.keys(ENGINE_DOWN)) delete process.env[name];
});

const pay = (campaign: string) =>
  call('POST', '/payments', {
    token,
    body: cardPaymentBody({ test_mode: true, custom_parameters: { campaign } }),
  });

const search = (body: unknown) => call('POST', '/search/payments', { token, body });
const byCampaign = (campaign: string) => ({ query: { $term: { 'custom_parameters.campaign': campaign } } });

function streamRecord(payment: PaymentRecord, sequence: number): DynamoDBRecord {
  return {
    eventName: 'MODIFY',
    dynamodb: {
      SequenceNumber: String(sequence),
      NewImage: marshall(paymentItem(payment), { removeUndefinedValues: true }) as never,
    },
  };
}

async function row(uuid: string) {
  const { rows } = await sql<{ version: number; status: string; document: string }>`
    SELECT version, status, document::text AS document FROM payment_search WHERE uuid = ${uuid}`.execute(searchDb());
  return rows[0];
}

describe('the search projection', () => {
  it('has a payment answered 201 in the very next search, with its row at the stored version', async () => {
    const created = await pay('next-search');
    expect(created.status).toBe(201);
    const found = await search(byCampaign('next-search'));
    expect(found.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([created.json.uuid]);
    const stored = await findPayment(created.json.uuid);
    expect((await row(created.json.uuid))?.version).toBe(stored?.version);
  });

  it('never moves a row backwards, whatever order and repetition the stream’s records come in', async () => {
    const created = (await pay('versions')).json;
    const stored = (await findPayment(created.uuid)) as PaymentRecord;
    const statuses = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
    const versions = statuses.map((status, index) => ({
      ...stored,
      status,
      version: stored.version + index + 1,
      custom_parameters: { campaign: 'versions', step: String(index) },
    }));
    const newest = versions.at(-1) as PaymentRecord;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...versions), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        async (arrivals, batchSize) => {
          const records = [...arrivals, newest].map((version, index) => streamRecord(version, index));
          // Shuffled by the generator; delivered in batches, some of them twice.
          for (let start = 0; start < records.length; start += batchSize) {
            const batch = records.slice(start, start + batchSize);
            expect((await projectStreamRecords({ Records: batch })).batchItemFailures).toEqual([]);
            if (start % 2 === 0) await projectStreamRecords({ Records: batch });
          }
          const projected = await row(created.uuid);
          expect(projected?.version).toBe(newest.version);
          expect(projected?.status).toBe('cancelled');
        },
      ),
      { numRuns: 40 },
    );
    const found = await search({ query: { $term: { 'custom_parameters.step': '3' } } });
    expect(found.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([created.uuid]);
  });

  it('reports the first record it cannot project, having projected the ones before it', async () => {
    const first = (await findPayment((await pay('batch-a')).json.uuid)) as PaymentRecord;
    const second = (await findPayment((await pay('batch-b')).json.uuid)) as PaymentRecord;
    const newer = (p: PaymentRecord) => ({
      ...p,
      version: p.version + 1,
      status: 'cancelled' as PaymentRecord['status'],
    });
    const broken: DynamoDBRecord = {
      eventName: 'MODIFY',
      dynamodb: {
        SequenceNumber: '2',
        NewImage: marshall({ pk: 'PAYMENT#x', sk: 'PAYMENT', entity: 'payment' }) as never,
      },
    };
    const result = await projectStreamRecords({
      Records: [streamRecord(newer(first), 1), broken, streamRecord(newer(second), 3)],
    });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    expect((await row(first.uuid))?.version).toBe(first.version + 1);
    expect((await row(second.uuid))?.version).toBe(second.version);
  });

  it('keeps the newest of versions projected at the same time', async () => {
    const created = (await pay('race')).json;
    const stored = (await findPayment(created.uuid)) as PaymentRecord;
    const versions = Array.from({ length: 8 }, (_, index) => ({ ...stored, version: stored.version + index + 1 }));
    await Promise.all(
      [...versions]
        .reverse()
        .map((version, index) => projectStreamRecords({ Records: [streamRecord(version, index)] })),
    );
    expect((await row(created.uuid))?.version).toBe(stored.version + 8);
  });

  it('stores and finds text PostgreSQL cannot hold (U+0000), and keeps a literal backslash-u apart', async () => {
    const withNul = (await pay('nul\u0000byte')).json;
    const literal = (await pay('nul\\u0000byte')).json;
    expect([withNul.uuid, literal.uuid].every(Boolean)).toBe(true);
    const nul = await search(byCampaign('nul\u0000byte'));
    expect(nul.status).toBe(200);
    expect(nul.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([withNul.uuid]);
    const text = await search(byCampaign('nul\\u0000byte'));
    expect(text.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([literal.uuid]);
    expect(text.json.hits[0].custom_parameters.campaign).toBe('nul\\u0000byte');
  });

  it('reads field paths such as constructor or toString as fields, in every search (never a 5xx)', async () => {
    for (const kind of ['payments', 'subscriptions', 'organisations']) {
      for (const field of ['constructor', 'toString', '__proto__', 'amount.valueOf', 'hasOwnProperty']) {
        const response = await call('POST', `/search/${kind}`, {
          token,
          body: {
            query: { $exists: field },
            sort: [{ field, direction: 'asc', field_type: 'numeric' }],
            aggs: { t: { type: 'term', field }, s: { type: 'sum', field } },
          },
        });
        expect(response.status, `${kind} ${field}: ${response.text}`).toBe(200);
        expect(response.json.summary.hits).toBe(0);
      }
    }
  });

  it('returns large documents intact, past one call’s size and one row’s (the Data API’s limits)', async () => {
    // 20 000 two-byte characters a payment: each document is fetched in pieces, and together
    // they pass the 800 KB a documents call carries.
    const big = 'é'.repeat(20_000);
    const uuids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const created = await call('POST', '/payments', {
        token,
        body: {
          account_uuid: DEMO.secondAccount,
          payment_method: 'card',
          profile: 'card',
          amount: { value: String(100 + i), currency: 'CHF' },
          payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
          custom_parameters: { campaign: 'large', note: `${i}:${big}` },
        },
      });
      expect(created.status, created.text).toBe(201);
      uuids.push(created.json.uuid);
    }
    const found = await search({ ...byCampaign('large'), size: 50 });
    expect(found.json.hits).toHaveLength(22);
    for (const hit of found.json.hits)
      expect(hit.custom_parameters.note).toBe(`${String(hit.amount.value - 100)}:${big}`);
    expect(new Set(found.json.hits.map((h: { uuid: string }) => h.uuid))).toEqual(new Set(uuids));
  });

  it('takes payments with the engine down, answers every search 503, and catches up from the stream', async () => {
    Object.assign(process.env, ENGINE_DOWN);
    const taken = await pay('while-down');
    expect(taken.status).toBe(201);
    const refused = await search(byCampaign('while-down'));
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({
      http_code: 503,
      code: 'service_unavailable',
      message: [{ code: 'error.service.unavailable' }],
    });
    // Every search, in the same shape; the resources themselves still answer.
    for (const kind of ['subscriptions', 'organisations']) {
      const other = await call('POST', `/search/${kind}`, { token, body: { query: { $match: {} } } });
      expect(other.status, kind).toBe(503);
      expect(other.json.error).toMatchObject({ http_code: 503, code: 'service_unavailable' });
    }
    expect((await call('GET', `/payments/${taken.json.uuid}`, { token })).status).toBe(200);
    expect((await call('GET', `/organisations/${DEMO.org}`, { token })).status).toBe(200);
    for (const name of Object.keys(ENGINE_DOWN)) delete process.env[name];
    // The write's own projection failed; the stream projector brings the row.
    expect(await row(taken.json.uuid)).toBeUndefined();
    expect((await call('POST', '/_local/settle')).status).toBe(200);
    const found = await search(byCampaign('while-down'));
    expect(found.json.hits.map((h: { uuid: string }) => h.uuid)).toEqual([taken.json.uuid]);
  });
});
