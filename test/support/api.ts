import { createGateway, type Gateway } from '@svc/local';
import { applySeed, DEMO_SEED, parseSeed, type SeedFile } from '@svc/seed';
import { assertConforms } from '../openapi/responses';

/**
 * Calls the API through the local gateway in-process: the same route table, API Gateway v2
 * events and domain handlers as `pnpm start`, without a socket.
 */
let gateway: Promise<Gateway> | undefined;

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** `Set-Cookie` values. */
  cookies: string[];
  text: string;
  /** The body's bytes as sent (a PDF). */
  bytes: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely
  json: any;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** The answer replays a record the test wrote into the table itself: not held against the API description. */
  planted?: true;
  /** The caller's address as API Gateway reports it (127.0.0.1 by default). */
  sourceIp?: string;
}

export async function call(method: string, url: string, options: CallOptions = {}): Promise<ApiResponse> {
  gateway ??= createGateway({ enableControl: true });
  const headers: Record<string, string> = { host: '127.0.0.1:3000', ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = Buffer.alloc(0);
  if (options.rawBody !== undefined) body = Buffer.from(options.rawBody);
  else if (options.body !== undefined) {
    body = Buffer.from(JSON.stringify(options.body));
    headers['content-type'] ??= 'application/json';
  }
  // The local controls take a POST only as JSON (apps/local/src/control.ts assertLocalCaller).
  if (url.startsWith('/_local/') && method === 'POST') headers['content-type'] ??= 'application/json';
  const response = await (await gateway).handle({
    method,
    url,
    headers,
    body,
    sourceIp: options.sourceIp ?? '127.0.0.1',
  });
  const text = response.body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  // Every answer is held against /openapi.json (a schema that lies fails the test that called).
  if (!options.planted) {
    assertConforms(method, url, response.status, response.headers['content-type'], json, requestExample(options));
  }
  return {
    status: response.status,
    headers: response.headers,
    cookies: response.cookies ?? [],
    text,
    bytes: response.body,
    json,
  };
}

/** The request body as an example: JSON as sent, a form as its fields; nothing for other bodies. */
function requestExample(options: CallOptions): unknown {
  if (options.body !== undefined) return options.body;
  if (options.rawBody === undefined) return undefined;
  const text = options.rawBody.toString();
  const type = Object.entries(options.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '';
  try {
    if (type.startsWith('application/json')) return JSON.parse(text);
    if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  } catch {
    return undefined;
  }
  return undefined;
}

export const DEMO = {
  org: '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60',
  otherOrg: '7a2e3d4b-5c6f-4a71-9b82-ac3d4e5f6071',
  account: '8b3f4e5c-6d7a-4b82-8c93-bd4e5f607182',
  secondAccount: '9c405f6d-7e8b-4c93-9da4-ce5f60718293',
  otherAccount: 'ad516a7e-8f9c-4da4-aeb5-df60718293a4',
  orgAddress: 'be627b8f-9a0d-4eb5-8fc6-e0718293a4b5',
  client: { id: 'demo-client', secret: 'demo-secret-change-me' },
  otherClient: { id: 'other-client', secret: 'other-secret-change-me' },
  operator: { id: 'demo-operator', secret: 'operator-secret-change-me' },
  partner: { id: 'demo-partner', secret: 'partner-secret-change-me' },
  partnerOrg: '0a0b0c0d-0e0f-4a1b-8c2d-3e4f5a6b7c8d',
  onboardingConfiguration: 'cf738c9a-ab1e-4fc6-b0d7-f18293a4b5c6',
} as const;

export async function seedDemo(): Promise<SeedFile> {
  const seed = parseSeed(DEMO_SEED);
  await applySeed(seed);
  return seed;
}

export async function tokenFor(client: { id: string; secret: string }): Promise<string> {
  const response = await call('POST', '/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret },
  });
  if (response.status !== 200) throw new Error(`token for ${client.id}: ${response.status} ${response.text}`);
  return response.json.access_token as string;
}

/** The simulated provider's good test card, as `payment_information`. */
export const GOOD_CARD_INFORMATION = {
  number: '4242424242424242',
  expiry_month: 12,
  expiry_year: 2099,
  cvv: '123',
} as const;

/** A card payment on the demo's second account (its `card` profile), with the given fields merged in. */
export function cardPaymentBody(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account_uuid: DEMO.secondAccount,
    payment_method: 'card',
    profile: 'card',
    amount: { value: '1200', currency: 'CHF' },
    payment_information: GOOD_CARD_INFORMATION,
    ...fields,
  };
}

/**
 * A `fetch` answered by the local gateway in-process (the same as `call`, answers held against
 * the API description too): hands @svc/client the service without a socket.
 */
export const gatewayFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const response = await call(request.method, `${url.pathname}${url.search}`, {
    rawBody: Buffer.from(await request.arrayBuffer()),
    headers,
  });
  const answer = new Headers();
  for (const [name, value] of Object.entries(response.headers)) answer.set(name, value);
  const empty = response.status === 204 || response.status === 304;
  return new Response(empty ? null : response.text, { status: response.status, headers: answer });
};
