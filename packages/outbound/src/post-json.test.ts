import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { definedFields } from '@svc/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, postJson } from './post-json';
import { selfSignedCertificate, type TestCertificate } from './testing/certificates';
import { fakeLookup } from './testing/fake-lookup';
import { closedPort, type Receiver, startReceiver, startSilentServer } from './testing/receiver';

/**
 * Real HTTPS on 127.0.0.1 under the name receiver.test: the fake lookup maps the name, the
 * self-signed certificate is passed as `ca`, and every test closes what it started.
 */

const run = promisify(execFile);
let receiverCert: TestCertificate;
let otherCert: TestCertificate;
const servers: Receiver[] = [];

beforeAll(() => {
  receiverCert = selfSignedCertificate('receiver.test');
  otherCert = selfSignedCertificate('other.test');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function receiver(handler: (response: ServerResponse) => void, certificate = receiverCert): Promise<Receiver> {
  const server = await startReceiver((_request, response) => handler(response), certificate);
  servers.push(server);
  return server;
}

function localLookup() {
  return fakeLookup({ 'receiver.test': ['127.0.0.1'] });
}

const BODY = JSON.stringify({ type: 'donation.created', data: { amount: '12.50', note: 'Grüße €' } });

describe('postJson against a local HTTPS receiver', () => {
  it('delivers the exact body and headers, with SNI and Host on the hostname', async () => {
    const server = await receiver((response) => {
      response.writeHead(201, 'Created Here', { 'X-Reply': 'yes', 'Set-Cookie': ['a=1', 'b=2'] });
      response.end('{"received":true}');
    });
    const dns = localLookup();
    const clock = [1_000, 1_042];
    const result = await postJson(
      `https://receiver.test:${server.port}/hooks/in?attempt=1#ignored`,
      BODY,
      { 'X-Signature': 'sha256=abc', 'User-Agent': 'svc-webhooks/1.0' },
      { allowPrivate: true, lookup: dns.lookup, ca: receiverCert.cert, now: () => clock.shift() ?? 0 },
    );

    expect(result).toEqual({
      ok: true,
      statusCode: 201,
      reasonPhrase: 'Created Here',
      requestHeaders: {
        'X-Signature': 'sha256=abc',
        'User-Agent': 'svc-webhooks/1.0',
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(BODY)),
        Host: `receiver.test:${server.port}`,
        Connection: 'close',
      },
      responseHeaders: expect.objectContaining({ 'x-reply': 'yes', 'set-cookie': 'a=1, b=2' }),
      responseBody: '{"received":true}',
      responseTimeMs: 42,
    });
    expect(server.requests).toHaveLength(1);
    const [received] = server.requests;
    expect(received).toMatchObject({
      method: 'POST',
      url: '/hooks/in?attempt=1',
      body: BODY,
      servername: 'receiver.test',
    });
    expect(received?.headers).toMatchObject({
      host: `receiver.test:${server.port}`,
      'x-signature': 'sha256=abc',
      'user-agent': 'svc-webhooks/1.0',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(BODY)),
    });
    expect(dns.calls).toEqual(['receiver.test']);
  });

  it("keeps the caller's Content-Type but not its Host or framing headers", async () => {
    const server = await receiver((response) => response.end());
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      { host: 'metadata.internal', 'content-length': '1', 'Transfer-Encoding': 'chunked', 'content-type': 'text/x' },
      { allowPrivate: true, lookup: localLookup().lookup, ca: receiverCert.cert },
    );
    expect(result.ok).toBe(true);
    expect(server.requests[0]?.headers).toMatchObject({
      host: `receiver.test:${server.port}`,
      'content-length': String(Buffer.byteLength(BODY)),
      'content-type': 'text/x',
    });
    expect(server.requests[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(server.requests[0]?.body).toBe(BODY);
  });

  it.each([
    [500, 'Internal Server Error'],
    [410, 'Gone'],
    [404, 'Not Found'],
  ])('reports %i as not ok, without an error', async (status, reason) => {
    const server = await receiver((response) => {
      response.writeHead(status);
      response.end('nope');
    });
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result).toMatchObject({ ok: false, statusCode: status, reasonPhrase: reason, responseBody: 'nope' });
    expect(result.error).toBeUndefined();
    expect(result.blocked).toBeUndefined();
  });

  it('does not follow a redirect', async () => {
    const server = await receiver((response) => {
      response.writeHead(302, { Location: 'https://169.254.169.254/latest/meta-data/' });
      response.end();
    });
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result).toMatchObject({ ok: false, statusCode: 302 });
    expect(result.responseHeaders.location).toBe('https://169.254.169.254/latest/meta-data/');
    expect(server.requests).toHaveLength(1);
  });

  it('truncates a large body at maxResponseBytes and stops reading', async () => {
    let connectionClosed = false;
    const server = await receiver((response) => {
      response.on('close', () => {
        connectionClosed = true;
      });
      response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.write('€'.repeat(200_000)); // 600 kB and the response never ends
    });
    const started = performance.now();
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
        maxResponseBytes: 1_000,
        timeoutMs: 10_000,
      },
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseTruncated: true });
    expect(result.error).toBeUndefined();
    expect(result.responseBody).toBe('€'.repeat(333));
    await server.allClosed();
    expect(connectionClosed).toBe(true);
  });

  it('times out on a receiver that never answers', async () => {
    const server = await receiver(() => {});
    const started = performance.now();
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
        timeoutMs: 200,
      },
    );
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1_500);
    expect(result.ok).toBe(false);
    expect(result.error).toBe('Timed out after 200 ms (waiting for the response)');
    expect(result.timedOut).toBe(true);
    expect(server.requests).toHaveLength(1);
    await server.allClosed();
  });

  it('times out while reading a body that never ends, keeping what arrived', async () => {
    const server = await receiver((response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.write('{"partial":');
    });
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
        timeoutMs: 200,
      },
    );
    expect(result).toMatchObject({ ok: false, statusCode: 200, responseBody: '{"partial":' });
    expect(result.error).toBe('Timed out after 200 ms (reading the response)');
  });

  it('reports a connection closed in the middle of the body', async () => {
    const server = await receiver((response) => {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('only part', () => response.socket?.destroy());
    });
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result).toMatchObject({ ok: false, statusCode: 200, responseBody: 'only part' });
    expect(result.error).toBeDefined();
  });

  it('sends SNI without the trailing dot of a fully qualified hostname', async () => {
    const server = await receiver((response) => response.end('dot'));
    const result = await postJson(
      `https://receiver.test.:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: fakeLookup({ 'receiver.test.': ['127.0.0.1'] }).lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result).toMatchObject({ ok: true, responseBody: 'dot' });
    expect(server.requests[0]).toMatchObject({ servername: 'receiver.test' });
    expect(server.requests[0]?.headers.host).toBe(`receiver.test.:${server.port}`);
  });

  it('times out on a server that accepts the connection but never completes the TLS handshake', async () => {
    const server = await startSilentServer();
    servers.push(server);
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
        timeoutMs: 200,
      },
    );
    expect(result.error).toBe('Timed out after 200 ms (TLS handshake)');
    expect(result.timedOut).toBe(true);
    expect(server.connections).toBe(1);
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const result = await postJson(
      `https://receiver.test:${port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result.ok).toBe(false);
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toMatch(/^Connection refused \(.*127\.0\.0\.1/);
    // Refused is an answer of sorts (nothing listens), not a receiver that says nothing.
    expect(result.timedOut).toBeUndefined();
    expect(result.blocked).toBeUndefined();
  });

  it('refuses a certificate issued for another name, even when it is trusted', async () => {
    const server = await receiver((response) => response.end(), otherCert);
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
        ca: `${receiverCert.cert}${otherCert.cert}`,
      },
    );
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^TLS error: .*receiver\.test.*other\.test/);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps each trust set apart when it reuses TLS contexts: trusted, untrusted, trusted again', async () => {
    const server = await receiver((response) => response.end('ok'));
    const post = (ca: string | undefined) =>
      postJson(
        `https://receiver.test:${server.port}/`,
        BODY,
        {},
        { allowPrivate: true, lookup: localLookup().lookup, ...definedFields({ ca }) },
      );
    expect((await post(receiverCert.cert)).ok).toBe(true);
    const other = await post(otherCert.cert);
    expect(other.ok).toBe(false);
    expect(other.error).toMatch(/^TLS error: /);
    expect((await post(undefined)).ok).toBe(false);
    expect((await post(receiverCert.cert)).ok).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('refuses a self-signed certificate when only the default trust store is used', async () => {
    const server = await receiver((response) => response.end());
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: localLookup().lookup,
      },
    );
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^TLS error: .*self[- ]signed/i);
    expect(server.requests).toHaveLength(0);
  });

  it('trusts NODE_EXTRA_CA_CERTS through the default trust store when no ca is given', async () => {
    const server = await receiver((response) => response.end('extra ca'));
    const directory = mkdtempSync(join(tmpdir(), 'outbound-extra-ca-'));
    const caFile = join(directory, 'ca.pem');
    writeFileSync(caFile, receiverCert.cert);
    const script = [
      `import { postJson } from ${JSON.stringify(new URL('./post-json.ts', import.meta.url).pathname)};`,
      "const lookup = (_name, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);",
      `const result = await postJson('https://receiver.test:${server.port}/', '{}', {}, { allowPrivate: true, lookup });`,
      'process.stdout.write(JSON.stringify(result));',
    ].join('\n');
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
      });
      expect(JSON.parse(stdout)).toMatchObject({ ok: true, responseBody: 'extra ca' });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('resolves the name once and connects to the pinned address (no DNS rebinding)', async () => {
    const server = await receiver((response) => response.end('pinned'));
    const dns = fakeLookup({ 'receiver.test': (call) => (call === 1 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: true,
        lookup: dns.lookup,
        ca: receiverCert.cert,
        timeoutMs: 2_000,
      },
    );
    expect(result).toMatchObject({ ok: true, responseBody: 'pinned' });
    expect(dns.calls).toEqual(['receiver.test']);
    expect(server.connections).toBe(1);
  });

  it('refuses the same receiver without connecting when private targets are not allowed', async () => {
    const server = await receiver((response) => response.end());
    const dns = localLookup();
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      {},
      {
        allowPrivate: false,
        lookup: dns.lookup,
        ca: receiverCert.cert,
      },
    );
    expect(result).toMatchObject({ ok: false, blocked: true });
    expect(result.error).toBe('Refusing to deliver to receiver.test (127.0.0.1): not a public address');
    expect(result.statusCode).toBeUndefined();
    expect(server.connections).toBe(0);
    expect(dns.calls).toEqual(['receiver.test']);
  });
});

describe('postJson, failures before connecting', () => {
  it('refuses odd spellings of loopback without connecting', async () => {
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://017700000001/', 'https://127.1/']) {
      const result = await postJson(url, BODY, {}, { allowPrivate: false, lookup: fakeLookup({}).lookup });
      expect(result).toMatchObject({ ok: false, blocked: true, error: expect.stringContaining('127.0.0.1') });
    }
  });

  it('returns a malformed URL as a blocked result instead of throwing', async () => {
    const result = await postJson('https://user:pw@', BODY, { 'X-Id': '1' }, { allowPrivate: false });
    expect(result).toMatchObject({ ok: false, blocked: true, error: 'The webhook URL is not a valid URL' });
    expect(result.requestHeaders).toMatchObject({ 'X-Id': '1', 'Content-Type': 'application/json' });
    expect(result.requestHeaders.Host).toBeUndefined();
  });

  it('reports a DNS failure as an error that is not a block', async () => {
    const result = await postJson(
      'https://missing.test/',
      BODY,
      {},
      { allowPrivate: false, lookup: fakeLookup({}).lookup },
    );
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^Host name not found/);
    expect(result.blocked).toBeUndefined();
  });

  it('reports an invalid header value instead of throwing, without connecting', async () => {
    const server = await receiver((response) => response.end());
    const result = await postJson(
      `https://receiver.test:${server.port}/`,
      BODY,
      { 'X-Injected': 'a\r\nX-Evil: 1' },
      { allowPrivate: true, lookup: localLookup().lookup, ca: receiverCert.cert },
    );
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/X-Injected/);
    expect(server.connections).toBe(0);
  });

  it('times out while resolving when the resolver never answers', async () => {
    const result = await postJson(
      'https://slow.test/',
      BODY,
      {},
      { allowPrivate: false, lookup: () => {}, timeoutMs: 50 },
    );
    expect(result.error).toBe('Timed out after 50 ms (resolving the host)');
  });
});

describe('postJson over plain http to loopback (local receivers)', () => {
  it('is allowed when private targets are allowed', async () => {
    const server = await startReceiver((_request, response) => response.end('plain'));
    servers.push(server);
    const result = await postJson(`http://127.0.0.1:${server.port}/in`, BODY, {}, { allowPrivate: true });
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseBody: 'plain' });
    expect(server.requests[0]?.body).toBe(BODY);
  });

  it('is refused otherwise, without connecting', async () => {
    const server = await startReceiver((_request, response) => response.end('plain'));
    servers.push(server);
    const result = await postJson(`http://127.0.0.1:${server.port}/in`, BODY, {}, { allowPrivate: false });
    expect(result).toMatchObject({ ok: false, blocked: true });
    expect(server.connections).toBe(0);
  });
});

describe('postJson against an address that never completes the TCP handshake', () => {
  // A socket left "connecting" forever stands in for a SYN nobody answers (a local black hole
  // cannot be made without root): Node queues the request until a connect that never comes.
  const neverConnects = () => Object.assign(new Socket(), { connecting: true });

  it('gives up after the connect timeout, well before the total bound', async () => {
    const started = performance.now();
    const result = await postJson(
      'http://127.0.0.1:9/in',
      BODY,
      {},
      { allowPrivate: true, timeoutMs: 5_000, connectTimeoutMs: 60, createConnection: neverConnects },
    );
    const elapsed = performance.now() - started;
    expect(result.ok).toBe(false);
    expect(result.error).toBe('Could not connect within 60 ms');
    expect(result.timedOut).toBe(true);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('still bounds the whole attempt by timeoutMs when the connect timeout is longer', async () => {
    const result = await postJson(
      'http://127.0.0.1:9/in',
      BODY,
      {},
      { allowPrivate: true, timeoutMs: 60, connectTimeoutMs: 5_000, createConnection: neverConnects },
    );
    expect(result.error).toBe('Timed out after 60 ms (connecting)');
    expect(result.timedOut).toBe(true);
  });

  it('lets a connected receiver use the whole bound (the connect timeout is the handshake’s only)', async () => {
    const server = await startReceiver((_request, response) => {
      setTimeout(() => response.end('late'), 150);
    });
    servers.push(server);
    const result = await postJson(
      `http://127.0.0.1:${server.port}/in`,
      BODY,
      {},
      { allowPrivate: true, timeoutMs: 2_000, connectTimeoutMs: 50 },
    );
    expect(result).toMatchObject({ ok: true, responseBody: 'late' });
  });

  it('defaults to a 3 s connect timeout inside the 10 s total bound', () => {
    expect(DEFAULT_CONNECT_TIMEOUT_MS).toBe(3_000);
    expect(DEFAULT_TIMEOUT_MS).toBe(10_000);
  });
});
