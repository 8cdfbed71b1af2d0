import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { httpGet, type LoadResult, runLoad } from './load';
import type { BenchService } from './service';

/**
 * `BENCH_ONLY=portal`: the donor portal's reads beside raw GetItem in the same run — the signed-in
 * donor's start page (HTML) and `GET /portal/api/subscriptions` (JSON), each with the session
 * cookie, against a strongly consistent GetItem of one item. The service runs with the
 * per-address limit raised (one address sends everything here).
 */
const ORG = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT = '8b3f4e5c-6d7a-4b82-8c93-bd4e5f607182';

export interface PortalBench {
  raw: LoadResult;
  page: LoadResult;
  api: LoadResult;
}

async function json(url: string, init: RequestInit & { token?: string }): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.headers as Record<string, string>),
    },
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A donor with a subscription, signed in: the session cookie. */
async function signedIn(url: string, token: string): Promise<string> {
  const put = await json(`${url}/organisations/${ORG}/portal-settings`, {
    method: 'PUT',
    token,
    body: JSON.stringify({
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
      min_amount: null,
      max_amount: null,
      intervals: ['monthly', 'yearly'],
      cancel_reasons: ['other'],
      retention_offer: null,
      brand: { name: 'Demo', color: '#0a3d62' },
      return_url: null,
    }),
  });
  if (put.status !== 200) throw new Error(`portal settings: ${put.status}`);
  const supporter = await json(`${url}/supporters`, {
    method: 'POST',
    token,
    body: JSON.stringify({ organisation_uuid: ORG, first_name: 'Ada', email: 'bench-donor@example.org' }),
  });
  const supporterUuid = (supporter.body as { uuid: string }).uuid;
  const source = await json(`${url}/payment-sources`, {
    method: 'POST',
    token,
    body: JSON.stringify({
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: '100', currency: 'CHF' },
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    }),
  });
  for (let i = 0; i < 3; i++) {
    const made = await json(`${url}/subscriptions`, {
      method: 'POST',
      token,
      body: JSON.stringify({
        account_uuid: ACCOUNT,
        payment_source_uuid: (source.body as { uuid: string }).uuid,
        supporter_uuid: supporterUuid,
        currency: 'CHF',
        amount: 2500 + i,
        recurring_interval: 'monthly',
        status: 'active',
      }),
    });
    if (made.status !== 201) throw new Error(`subscription: ${made.status} ${JSON.stringify(made.body)}`);
  }
  const link = await json(`${url}/supporters/${supporterUuid}/portal-links`, {
    method: 'POST',
    token,
    body: JSON.stringify({ flow: 'manage' }),
  });
  const linkUrl = new URL((link.body as { url: string }).url);
  const page = await fetch(`${url}${linkUrl.pathname}${linkUrl.search}`);
  const html = await page.text();
  const csrfCookie = (page.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const redeemed = await fetch(`${url}/portal`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ token: field('token'), csrf: field('csrf') }).toString(),
  });
  const session = (redeemed.headers.getSetCookie?.() ?? [])
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith('svc_portal_session='));
  if (!session) throw new Error(`No portal session (${redeemed.status})`);
  return session;
}

export async function benchPortal(
  service: BenchService,
  token: string,
  seconds: number,
  concurrency: number,
): Promise<PortalBench> {
  const cookie = await signedIn(service.url, token);
  const client = new DynamoDBClient({
    endpoint: service.dynamo,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const rawGet = async () =>
    (
      await client.send(
        new GetItemCommand({
          TableName: 'svc-local',
          Key: { pk: { S: `ORG#${ORG}` }, sk: { S: 'ORG' } },
          ConsistentRead: true,
        }),
      )
    ).Item !== undefined;
  const headers = { cookie };
  const page = () => httpGet(`${service.url}/portal/home`, headers);
  const api = () => httpGet(`${service.url}/portal/api/subscriptions`, headers);
  for (const warm of [rawGet, page, api]) await runLoad(warm, { seconds: 2, concurrency });
  const result = {
    raw: await runLoad(rawGet, { seconds, concurrency }),
    page: await runLoad(page, { seconds, concurrency }),
    api: await runLoad(api, { seconds, concurrency }),
  };
  client.destroy();
  return result;
}

/** The environment the bench's service runs with: one address sends all the portal's traffic. */
export const PORTAL_BENCH_ENV = { SVC_ADDRESS_RATE_LIMIT: '100000/100000' };
