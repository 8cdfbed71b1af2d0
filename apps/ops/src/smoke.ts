import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createSvcClient, verifyWebhookSignature } from '@svc/client';
import { selfSignedCertificate } from '@svc/outbound/testing/certificates';

/**
 * `pnpm smoke`: a short end-to-end check of a running stage over its public HTTP API only, through
 * @svc/client, the typed client an integrator uses (it imports no service code, so it judges any
 * stage, local or deployed): a token, a test-mode card
 * payment, a refund of it, and both events delivered to a webhook receiver, signed.
 *
 * The receiver is either given (`--receiver-url`, any https URL the stage can reach; the check
 * then reads the stage's own delivery records) or started here on 127.0.0.1 with a certificate
 * from `--receiver-tls DIR` (made there when missing), which the service must trust: the local
 * runtime started with `NODE_EXTRA_CA_CERTS=DIR/cert.pem`. Everything the check creates in the
 * stage (endpoint, subscriptions) is deleted at the end; the test-mode payment stays, refunded.
 */
export interface SmokeOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The account the payment is taken on; default the first account the client may see. */
  account?: string;
  /** A profile of that account whose provider takes test-mode cards. */
  profile: string;
  currency: string;
  receiverUrl?: string;
  receiverTlsDir: string;
  /** How long deliveries may take to show up (real seconds; the local runtime is settled instead). */
  deliverySeconds: number;
  out: (line: string) => void;
}

export interface SmokeResult {
  ok: boolean;
  steps: Array<{ name: string; ms: number; ok: boolean; detail?: string }>;
}

class SmokeFailure extends Error {}

interface Received {
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The public test card of the simulated provider and of Stripe's test mode: sent only with
 * `test_mode: true`, never printed; the service keeps only its masked form.
 */
const TEST_CARD = { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' } as const;

const EVENTS = ['svc.payments.payment.succeeded', 'svc.payments.refund.succeeded'] as const;

export async function runSmoke(options: SmokeOptions): Promise<SmokeResult> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const steps: SmokeResult['steps'] = [];
  const cleanup: Array<() => Promise<unknown>> = [];
  const timed: typeof fetch = (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(30_000) });
  const client = createSvcClient({
    baseUrl: base,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    fetch: timed,
  });

  /** The answer's body, once its status is one of `expected`. */
  function answered<T>(
    what: string,
    result: { data?: T; error?: unknown; response: Response },
    expected: number[] = [200],
  ): { status: number; data: T | undefined; error: unknown } {
    if (!expected.includes(result.response.status)) {
      throw new SmokeFailure(
        `${what} answered ${result.response.status}: ${JSON.stringify(result.error ?? result.data).slice(0, 500)}`,
      );
    }
    return { status: result.response.status, data: result.data, error: result.error };
  }

  async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
    const began = performance.now();
    try {
      const value = await run();
      const ms = performance.now() - began;
      steps.push({ name, ms, ok: true });
      options.out(`  ok    ${name} (${ms.toFixed(0)} ms)`);
      return value;
    } catch (error) {
      const ms = performance.now() - began;
      const detail = error instanceof Error ? error.message : String(error);
      steps.push({ name, ms, ok: false, detail });
      options.out(`  FAIL  ${name} (${ms.toFixed(0)} ms): ${detail}`);
      throw error;
    }
  }

  options.out(`Smoke check of ${base}`);
  let receiver: LocalReceiver | undefined;
  try {
    await step('GET /health answers ok', async () => {
      const response = await timed(`${base}/health`);
      const json = (await response.json()) as { status?: string };
      if (json.status !== 'ok') throw new SmokeFailure(`unexpected health ${JSON.stringify(json)}`);
    });
    await step('a token for the client (client credentials)', async () => {
      await client.token().catch((error: unknown) => {
        throw new SmokeFailure(error instanceof Error ? error.message : String(error));
      });
    });
    const accounts = await step('the accounts to pay into', async () => {
      if (options.account) {
        const one = await client.GET('/accounts/{account_uuid}', {
          params: { path: { account_uuid: options.account } },
        });
        return [answered('GET /accounts/{uuid}', one).data as AccountShape];
      }
      const visible = (answered('GET /accounts', await client.GET('/accounts')).data ?? []) as AccountShape[];
      const first = visible[0];
      if (!first) throw new SmokeFailure('the client may see no account: pass --account or grant one');
      // The first organisation's accounts; the payment goes to the first with the profile.
      return visible.filter((a) => organisationOf(a) === organisationOf(first));
    });
    const organisation = organisationOf(accounts[0] as AccountShape);
    const hmacKey = randomBytes(24).toString('hex');
    const endpointUrl = await step(
      options.receiverUrl ? 'the given webhook receiver' : 'a webhook receiver on 127.0.0.1',
      async () => {
        if (options.receiverUrl) return options.receiverUrl;
        receiver = await startLocalReceiver(receiverCertificate(options.receiverTlsDir));
        return receiver.url;
      },
    );
    const endpoint = await step('POST /webhooks and an event subscription per event', async () => {
      const { data } = answered(
        'POST /webhooks',
        await client.POST('/webhooks', {
          body: { organisation_uuid: organisation, alias: 'pnpm smoke', endpoint: endpointUrl, hmac_key: hmacKey },
        }),
        [201],
      );
      const uuid = String(data?.uuid);
      cleanup.push(() => client.DELETE('/webhooks/{webhook_uuid}', { params: { path: { webhook_uuid: uuid } } }));
      for (const event_name of EVENTS) {
        const created = answered(
          'POST /event-subscriptions',
          await client.POST('/event-subscriptions', {
            body: {
              organisation_uuid: organisation,
              action_configuration_uuid: uuid,
              action_type: 'webhook',
              event_name,
            },
          }),
          [201],
        );
        const subscription = String(created.data?.uuid);
        cleanup.unshift(() =>
          client.DELETE('/event-subscriptions/{event_subscription_uuid}', {
            params: { path: { event_subscription_uuid: subscription } },
          }),
        );
      }
      return uuid;
    });
    const payment = await step('POST /payments: a test-mode card payment succeeds', async () => {
      for (const account of accounts) {
        const { status, data, error } = answered(
          'POST /payments',
          await client.POST('/payments', {
            body: {
              account_uuid: account.uuid,
              payment_method: 'card',
              profile: options.profile,
              test_mode: true,
              amount: { value: '100', currency: options.currency },
              payment_information: { ...TEST_CARD },
              custom_parameters: { smoke: 'true' },
            },
          }),
          [201, 400],
        );
        // An account without the profile refuses with a 400 on `profile` and keeps nothing: try the next.
        if (status === 400 && refusedProfile(error) && account !== accounts.at(-1)) continue;
        if (status !== 201 || !data)
          throw new SmokeFailure(`POST /payments answered ${status}: ${JSON.stringify(error)}`);
        if (data.status !== 'succeeded')
          throw new SmokeFailure(`the payment is ${data.status}, not succeeded: ${JSON.stringify(data)}`);
        return data.uuid;
      }
      throw new SmokeFailure('no account to pay into');
    });
    const refund = await step('POST /payments/{uuid}/refunds refunds it in full', async () => {
      const path = { params: { path: { payment_uuid: payment } } };
      const { data } = answered(
        'POST /payments/{uuid}/refunds',
        await client.POST('/payments/{payment_uuid}/refunds', path),
      );
      if (data?.status !== 'succeeded') throw new SmokeFailure(`the refund is ${String(data?.status)}`);
      const read = answered('GET /payments/{uuid}', await client.GET('/payments/{payment_uuid}', path)).data;
      const refunded = read?.refunded_amount.value;
      if (refunded !== '100') throw new SmokeFailure(`refunded_amount is ${refunded}, not 100`);
      return data.uuid;
    });
    await step('both events delivered to the receiver (2xx), signed', async () => {
      const wanted = new Map([
        [payment, EVENTS[0]],
        [refund, EVENTS[1]],
      ]);
      const deadline = Date.now() + options.deliverySeconds * 1000;
      for (;;) {
        // The local runtime runs due background work on request; a deployed stage has no such path.
        await fetch(`${base}/_local/settle`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          signal: AbortSignal.timeout(60_000),
        }).catch(() => {});
        const query = { organisation_uuid: organisation, webhook_configuration_uuid: endpoint, size: 100 };
        const listed = await client.GET('/webhook-responses', { params: { query } });
        const responses = (answered('GET /webhook-responses', listed).data ?? []) as DeliveryRecord[];
        const delivered = responses.filter((r) => r.error === 'false' && wanted.has(r.object_uuid));
        if (new Set(delivered.map((r) => r.object_uuid)).size === wanted.size) break;
        if (Date.now() > deadline) {
          const failed = responses.find((r) => wanted.has(r.object_uuid) && r.error === 'true');
          if (!failed) throw new SmokeFailure(`no delivery within ${options.deliverySeconds} s`);
          const one = await client.GET('/webhook-responses/{webhook_response_uuid}', {
            params: { path: { webhook_response_uuid: failed.uuid } },
          });
          const detail = answered('GET /webhook-responses/{uuid}', one).data as DeliveryRecord;
          throw new SmokeFailure(`a delivery failed: ${describeFailure(detail)}${deliveryHint(detail, options)}`);
        }
        await new Promise((done) => setTimeout(done, 1000));
      }
      if (!receiver) return;
      for (const [objectUuid, eventName] of wanted) {
        const request = receiver.received.find((r) => eventOf(r)?.object_uuid === objectUuid);
        if (!request) throw new SmokeFailure(`the receiver never saw ${eventName}`);
        if (eventOf(request)?.name !== eventName)
          throw new SmokeFailure(`expected ${eventName}, got ${eventOf(request)?.name}`);
        if (!signatureHolds(request, hmacKey)) throw new SmokeFailure(`${eventName} carries no valid X-Svc-Signature`);
      }
    });
    return { ok: true, steps };
  } catch (error) {
    if (!(error instanceof SmokeFailure) && steps.every((s) => s.ok)) {
      options.out(`  FAIL  ${error instanceof Error ? error.message : String(error)}`);
    }
    return { ok: false, steps };
  } finally {
    for (const undo of cleanup) await undo().catch(() => {});
    await receiver?.close();
  }
}

/** List items name `organisation_uuid`; a single account embeds its `organisation`. */
interface AccountShape {
  uuid: string;
  organisation_uuid?: string;
  organisation?: { uuid: string };
}

const organisationOf = (account: AccountShape) => account.organisation_uuid ?? account.organisation?.uuid ?? '';

function refusedProfile(answer: unknown): boolean {
  const problems = (answer as { error?: { message?: Array<{ property?: string }> } } | undefined)?.error?.message;
  return Array.isArray(problems) && problems.some((problem) => problem.property === 'profile');
}

interface DeliveryRecord {
  uuid: string;
  object_uuid: string;
  error: 'true' | 'false';
  status_code?: number;
  reason_phrase?: string;
  error_message?: string;
}

function describeFailure(record: DeliveryRecord): string {
  return [record.status_code, record.reason_phrase, record.error_message]
    .filter((part) => part !== undefined)
    .join(' ');
}

function deliveryHint(failed: DeliveryRecord, options: SmokeOptions): string {
  if (options.receiverUrl || !/certificate|self.signed|TLS/i.test(failed.error_message ?? '')) return '';
  return ` (is the service started with NODE_EXTRA_CA_CERTS=${join(options.receiverTlsDir, 'cert.pem')}? It must trust the receiver's certificate)`;
}

function eventOf(request: Received): { name?: string; object_uuid?: string } | undefined {
  try {
    return (JSON.parse(request.body) as { event?: { name?: string; object_uuid?: string } }).event;
  } catch {
    return undefined;
  }
}

/** `X-Svc-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the endpoint's key. */
export function signatureHolds(request: Received, hmacKey: string): boolean {
  const header = request.headers['x-svc-signature'];
  // The check is of the signature; a local runtime's clock may be moved, so no freshness here.
  return verifyWebhookSignature({
    body: request.body,
    signature: typeof header === 'string' ? header : undefined,
    hmacKey,
    toleranceSeconds: Number.POSITIVE_INFINITY,
  });
}

/**
 * The receiver's certificate for 127.0.0.1 (a year), kept in `dir` so the service can be told once
 * to trust it; delete the directory to make a new one.
 */
export function receiverCertificate(dir: string): { cert: string; key: string } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    const made = selfSignedCertificate('127.0.0.1', 365);
    mkdirSync(dir, { recursive: true });
    writeFileSync(keyFile, made.key, { mode: 0o600 });
    writeFileSync(certFile, made.cert);
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

interface LocalReceiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

async function startLocalReceiver(tls: { cert: string; key: string }): Promise<LocalReceiver> {
  const received: Received[] = [];
  const server: Server = createServer(tls, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/smoke`,
    received,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
