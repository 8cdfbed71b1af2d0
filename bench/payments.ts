import { randomUUID } from 'node:crypto';
import { BatchWriteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { newEvent } from '@svc/events';
import { createClient } from '@svc/identity';
import { createGateway } from '@svc/local';
import { organisationSeedSchema, upsertOrganisation } from '@svc/organisations';
import { type PaymentRecord, paymentItem } from '@svc/payments';
import { db, resetDbClient } from '@svc/table';
import { httpPost, latency, runLoad } from './load';
import type { BenchService } from './service';
import { tokenFor } from './service';

/**
 * Issue 3's figures, each beside a baseline from the same run:
 *  1. payments initialised per second through the gateway vs raw PutItem of a same-sized item;
 *  2. capacity units of initialise, get and refund (ReturnConsumedCapacity) vs their minimum;
 *  3. search latency at 10k and 100k payments, a selective query and an aggregation.
 */
const DEMO_ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const paymentBody = {
  account_uuid: DEMO_ACCOUNT,
  payment_method: 'sepa_dd',
  profile: 'sepa_dd',
  amount: { value: '2500', currency: 'CHF' },
  payment_information: { iban: 'CH93 0076 2011 6238 5295 7', account_holder: 'Ada Donor' },
  custom_parameters: { campaign: 'spring' },
};

function useServiceStore(service: BenchService): void {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = service.dynamo;
  process.env.AWS_REGION = 'eu-central-2';
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  process.env.SVC_TABLE_NAME = 'svc-local';
  process.env.SVC_DATA_DIR = ':memory:';
  resetDbClient();
}

export async function benchInitialiseThroughput(
  service: BenchService,
  token: string,
  seconds: number,
  concurrency: number,
) {
  const raw = new DynamoDBClient({
    endpoint: service.dynamo,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const sample = samplePayment(randomUUID(), 'bench-org', 0);
  const rawPut = async () => {
    const item = { ...paymentItem({ ...sample, uuid: randomUUID() }) };
    await raw.send(
      new PutItemCommand({ TableName: 'svc-local', Item: marshall(item, { removeUndefinedValues: true }) }),
    );
    return true;
  };
  const headers = { authorization: `Bearer ${token}` };
  const apiPost = () => httpPost(`${service.url}/payments`, headers, paymentBody);
  await runLoad(rawPut, { seconds: 3, concurrency });
  await runLoad(apiPost, { seconds: 3, concurrency });
  const rawResult = await runLoad(rawPut, { seconds, concurrency });
  const apiResult = await runLoad(apiPost, { seconds, concurrency });
  raw.destroy();
  return { raw: rawResult, api: apiResult, ratio: apiResult.perSecond / rawResult.perSecond };
}

interface Consumed {
  command: string;
  units: number;
}

/** Initialise, get and refund in this process, with every DynamoDB call's capacity recorded. */
export async function benchCapacity(service: BenchService) {
  useServiceStore(service);
  const consumed: Consumed[] = [];
  db().middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
      const result = await next(args);
      const output = result.output as {
        ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }>;
      };
      const records = Array.isArray(output.ConsumedCapacity)
        ? output.ConsumedCapacity
        : output.ConsumedCapacity
          ? [output.ConsumedCapacity]
          : [];
      for (const record of records)
        consumed.push({ command: context.commandName ?? '?', units: record.CapacityUnits ?? 0 });
      return result;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );
  const gateway = await createGateway({ enableControl: false });
  const token = await tokenFor(service.url, 'demo-client', 'demo-secret-change-me');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', host: '127.0.0.1' };
  const send = async (method: string, url: string, body?: unknown) => {
    const response = await gateway.handle({
      method,
      url,
      headers,
      body: Buffer.from(body ? JSON.stringify(body) : ''),
      sourceIp: '127.0.0.1',
    });
    return JSON.parse(response.body.toString()) as { uuid: string };
  };
  // Warm: the signing key's public half and the first reads are not part of a request's cost.
  await send('GET', '/organisations');
  const measure = async (operation: () => Promise<unknown>) => {
    consumed.length = 0;
    await operation();
    const byCommand = new Map<string, number>();
    for (const c of consumed) byCommand.set(c.command, (byCommand.get(c.command) ?? 0) + c.units);
    return { units: consumed.reduce((n, c) => n + c.units, 0), byCommand: Object.fromEntries(byCommand) };
  };
  let paymentUuid = '';
  const initialise = await measure(async () => {
    paymentUuid = (await send('POST', '/payments', paymentBody)).uuid;
  });
  const get = await measure(() => send('GET', `/payments/${paymentUuid}`));
  const refund = await measure(() =>
    send('POST', `/payments/${paymentUuid}/refunds`, { amount: { value: '500', currency: 'CHF' } }),
  );
  // The minimum each operation needs, measured on the same items with plain single calls: one
  // strongly consistent read of every item its rules need and one write of the changed payment.
  const unit = async (command: GetCommand | PutCommand) => {
    consumed.length = 0;
    await db().send(command as GetCommand);
    return consumed.reduce((n, c) => n + c.units, 0);
  };
  const read = (pk: string, sk: string) =>
    unit(new GetCommand({ TableName: 'svc-local', Key: { pk, sk }, ConsistentRead: true }));
  const caller = await read('CLIENT#demo-client', 'CLIENT');
  const account = await read(`ACCOUNT#${DEMO_ACCOUNT}`, 'ACCOUNT');
  const payment = await read(`PAYMENT#${paymentUuid}`, 'PAYMENT');
  const key = { pk: `PAYMENT#${paymentUuid}`, sk: 'PAYMENT' };
  const stored = (await db().send(new GetCommand({ TableName: 'svc-local', Key: key }))).Item ?? {};
  const write = await unit(new PutCommand({ TableName: 'svc-local', Item: { ...stored, pk: `BENCH#${paymentUuid}` } }));
  return {
    initialise: {
      ...initialise,
      minimum: caller + account + write,
      minimumIs: `read caller ${caller} + account ${account} RCU, write payment ${write} WCU`,
    },
    get: { ...get, minimum: caller + payment, minimumIs: `read caller ${caller} + payment ${payment} RCU` },
    refund: {
      ...refund,
      minimum: caller + payment + write,
      minimumIs: `read caller ${caller} + payment ${payment} RCU, write payment ${write} WCU`,
    },
  };
}

function samplePayment(uuid: string, organisation: string, i: number): PaymentRecord {
  return {
    uuid,
    organisation_uuid: organisation,
    account_uuid: DEMO_ACCOUNT,
    created: 1_700_000_000 + i,
    // As if written just now, as every write stamps the service clock.
    updated: Math.floor(Date.now() / 1000),
    status: i % 10 === 0 ? 'failed' : 'succeeded',
    test_mode: false,
    amount_minor: 500 + (i % 97) * 100,
    refunded_minor: 0,
    currency: 'CHF',
    payment_method: (['card', 'twint', 'sepa_dd'] as const)[i % 3] ?? 'card',
    profile: 'card',
    provider: 'simulated',
    payment_information: {
      brand: 'visa',
      last4: '4242',
      expiry_month: 12,
      expiry_year: 2030,
      fingerprint: 'abcdefghijklmnopqrstuv',
    },
    supporter: { first_name: `Donor${i}`, last_name: 'Example', email: `donor${i}@example.org` },
    refunds: [],
    // One payment in 5000 carries the rare campaign a selective search looks for.
    custom_parameters: { campaign: i % 5000 === 0 ? 'rare-appeal' : `campaign-${i % 20}` },
    svc_parameters: {},
    version: 1,
    event_sequence: 1,
    events: [
      newEvent({
        name: 'svc.payments.payment.succeeded',
        object: 'payment',
        object_uuid: uuid,
        organisation_uuid: organisation,
        account_uuid: DEMO_ACCOUNT,
        sequence: 1,
      }),
    ],
  };
}

/** Fills an organisation with payments straight into the table (BatchWriteItem, 25 at a time). */
async function loadPayments(organisation: string, from: number, to: number): Promise<void> {
  const client = new DynamoDBClient({});
  const batches: Array<Record<string, unknown>[]> = [];
  for (let i = from; i < to; i += 25) {
    batches.push(
      Array.from({ length: Math.min(25, to - i) }, (_, k) =>
        paymentItem(samplePayment(randomUUID(), organisation, i + k)),
      ),
    );
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++] ?? [];
        let items = batch.map((item) => ({ PutRequest: { Item: marshall(item, { removeUndefinedValues: true }) } }));
        while (items.length > 0) {
          const out = await client.send(new BatchWriteItemCommand({ RequestItems: { 'svc-local': items } }));
          items = (out.UnprocessedItems?.['svc-local'] ?? []) as typeof items;
        }
      }
    }),
  );
  client.destroy();
}

export async function benchSearch(service: BenchService, sizes: number[], runs: number) {
  useServiceStore(service);
  const organisation = randomUUID();
  await upsertOrganisation(organisationSeedSchema.parse({ uuid: organisation, name: 'Search bench charity' }));
  const client = await createClient({ grants: [{ organisation_uuid: organisation }] });
  const token = await tokenFor(service.url, client.client_id, client.client_secret);
  const headers = { authorization: `Bearer ${token}` };
  const selective = { query: { $term: { 'custom_parameters.campaign': 'rare-appeal' } }, size: 10 };
  const aggregation = {
    query: { $match: { status: 'succeeded' } },
    size: 0,
    aggs: { methods: { type: 'term', field: 'payment_method' }, total: { type: 'sum', field: 'amount.value' } },
  };
  const results: Array<{
    payments: number;
    loadSeconds: number;
    firstMs: number;
    selective: { p50ms: number; p95ms: number };
    aggregation: { p50ms: number; p95ms: number };
  }> = [];
  let loaded = 0;
  for (const size of sizes) {
    const started = performance.now();
    await loadPayments(organisation, loaded, size);
    loaded = size;
    const loadSeconds = (performance.now() - started) / 1000;
    const search = (body: unknown) => () => httpPost(`${service.url}/search/payments`, headers, body, 200);
    // The first search after the load reads what changed (all of it the first time): what a
    // fresh container pays once.
    const firstMs = (await latency(search(selective), 1)).p50ms;
    results.push({
      payments: size,
      loadSeconds,
      firstMs,
      selective: await latency(search(selective), runs),
      aggregation: await latency(search(aggregation), runs),
    });
  }
  return results;
}
