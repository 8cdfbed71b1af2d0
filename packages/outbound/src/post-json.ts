import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { type ConnectionOptions, createSecureContext, type SecureContext } from 'node:tls';
import { type BlockedReason, BlockedTargetError } from './blocked-target-error';
import { type LookupFn, pinnedLookup } from './lookup';
import { type ResolvedTarget, resolveTarget } from './resolve-target';
import { ResponseBody } from './response-body';

export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * The TCP handshake's own bound, inside the total one: a host that never answers a SYN (gone,
 * firewalled) is given up on after 3 s instead of holding a worker for the whole 10 s. Linux
 * would otherwise retry the SYN for about two minutes (tcp_syn_retries = 6,
 * https://www.kernel.org/doc/Documentation/networking/ip-sysctl.txt), so the bound must be ours.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
/** Enough of a receiver's answer to debug a failed delivery, not enough to fill the delivery log. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostResult {
  /** A 2xx status and the whole exchange completed (a timeout while reading the body is not ok). */
  ok: boolean;
  statusCode?: number;
  reasonPhrase?: string;
  /** As sent, including the Host, Content-Type, Content-Length and Connection set here. */
  requestHeaders: Record<string, string>;
  /** Names in lower case; repeated headers joined with ", ". */
  responseHeaders: Record<string, string>;
  /** Decoded as UTF-8, at most maxResponseBytes bytes of it. */
  responseBody: string;
  /** Set when the body was cut at maxResponseBytes. */
  responseTruncated?: boolean;
  /** From the call to the end of the exchange: resolution, connect, TLS, request and response. */
  responseTimeMs: number;
  /** Network error, timeout, TLS error, blocked target: a short human message. */
  error?: string;
  /** Refused by the SSRF guard (never connected): retrying will not help. */
  blocked?: boolean;
  /** The connect timeout or the total bound ended it: the receiver said nothing in time. */
  timedOut?: boolean;
  /** Why the guard refused it (with `blocked`): `address` may change with DNS; the others never do. */
  blockedReason?: BlockedReason;
}

export interface PostJsonOptions {
  /** Local stages only (SVC_WEBHOOK_ALLOW_PRIVATE): skip the public-address check. */
  allowPrivate: boolean;
  /** Overall budget for resolution, connect, TLS and the whole response. */
  timeoutMs?: number;
  /** Budget for the TCP handshake alone (from the socket's creation to its connect). */
  connectTimeoutMs?: number;
  /** Tests only: the socket to send on, instead of a fresh TCP connection to the checked address. */
  createConnection?: () => Socket;
  maxResponseBytes?: number;
  lookup?: LookupFn;
  /** Replaces the default trust store (which includes NODE_EXTRA_CA_CERTS); tests only, normally. */
  ca?: string | Buffer;
  /** Clock for responseTimeMs, in milliseconds. */
  now?: () => number;
}

type Phase =
  | 'resolving the host'
  | 'connecting'
  | 'TLS handshake'
  | 'waiting for the response'
  | 'reading the response';

/** What is known about one delivery attempt so far; filled in as events arrive. */
interface Exchange {
  phase: Phase;
  statusCode?: number;
  reasonPhrase?: string;
  responseHeaders: Record<string, string>;
  body: ResponseBody;
  error?: unknown;
}

class ConnectTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`Could not connect within ${timeoutMs} ms`);
  }
}

class DeliveryTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`Timed out after ${timeoutMs} ms`);
  }
}

/** Set here from the URL and body; a caller's own values would break framing or the SNI/Host pairing. */
const CONTROLLED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

/**
 * POSTs `body` to a webhook URL after resolveTarget has checked it, connecting to the checked
 * address itself (pinned through the request's `lookup`, so the name is never resolved twice and
 * DNS rebinding cannot redirect the socket) while SNI, certificate verification and Host use the
 * hostname. No redirects, no connection reuse (a pooled socket could have been opened to another
 * address), certificate checks always on. Never throws: every failure is described in the result.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostJsonOptions,
): Promise<PostResult> {
  const clock = options.now ?? (() => performance.now());
  const started = clock();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const exchange: Exchange = {
    phase: 'resolving the host',
    responseHeaders: {},
    body: new ResponseBody(options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES),
  };
  let requestHeaders: Record<string, string> = {};
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DeliveryTimeout(timeoutMs)), timeoutMs);
  try {
    requestHeaders = buildRequestHeaders(hostHeaderOf(url), body, headers);
    const target = await untilAborted(resolveTarget(url, options), deadline.signal);
    await send(target, body, requestHeaders, exchange, {
      ca: options.ca,
      signal: deadline.signal,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...definedConnection(options.createConnection),
    });
  } catch (error) {
    exchange.error = error;
  } finally {
    clearTimeout(timer);
  }
  return toResult(exchange, requestHeaders, Math.round(clock() - started));
}

/** The caller's headers minus the controlled ones (names compared case-insensitively, last wins), then ours. */
function buildRequestHeaders(
  host: string | undefined,
  body: string,
  headers: Record<string, string>,
): Record<string, string> {
  const byName = new Map<string, [string, string]>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!CONTROLLED_HEADERS.has(lower)) byName.set(lower, [name, value]);
  }
  if (!byName.has('content-type')) byName.set('content-type', ['Content-Type', 'application/json']);
  byName.set('content-length', ['Content-Length', String(Buffer.byteLength(body))]);
  if (host !== undefined) byName.set('host', ['Host', host]);
  byName.set('connection', ['Connection', 'close']);
  return Object.fromEntries(byName.values());
}

/** The URL's host with a non-default port, as Host wants it; undefined for a URL that will be refused anyway. */
function hostHeaderOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** The promise, unless the signal fires first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One request on a fresh connection; settles once (response read, limit reached, error or
 * deadline), always destroying the request so no socket outlives the call.
 */
function send(
  target: ResolvedTarget,
  body: string,
  headers: Record<string, string>,
  exchange: Exchange,
  context: SendContext,
): Promise<void> {
  return new Promise((resolve) => {
    let request: http.ClientRequest | undefined;
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      if (error !== undefined) exchange.error = error;
      context.signal.removeEventListener('abort', onAbort);
      request?.destroy();
      resolve();
    };
    const onAbort = () => finish(context.signal.reason);
    if (context.signal.aborted) return onAbort();
    context.signal.addEventListener('abort', onAbort, { once: true });
    const secure = target.url.protocol === 'https:';
    exchange.phase = 'connecting';
    try {
      const transport = secure ? https : http;
      const options = requestOptions(target, headers, context.ca);
      if (context.createConnection) {
        // Node's client takes createConnection only without an agent (lib/_http_client.js).
        delete options.agent;
        options.createConnection = context.createConnection;
      }
      request = transport.request(options, (response) => readResponse(response, exchange, finish));
    } catch (error) {
      return finish(error);
    }
    request.on('socket', (socket) => {
      trackPhases(socket, exchange, secure);
      // The handshake's own bound; the total deadline still covers everything after it.
      connectTimer = setTimeout(() => finish(new ConnectTimeout(context.connectTimeoutMs)), context.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    request.on('error', finish);
    request.end(body);
  });
}

interface SendContext {
  ca: string | Buffer | undefined;
  signal: AbortSignal;
  connectTimeoutMs: number;
  createConnection?: () => Socket;
}

function definedConnection(createConnection: (() => Socket) | undefined): Pick<SendContext, 'createConnection'> {
  return createConnection === undefined ? {} : { createConnection };
}

function requestOptions(
  target: ResolvedTarget,
  headers: Record<string, string>,
  ca: string | Buffer | undefined,
): TlsRequestOptions {
  const { url, hostname } = target;
  const secure = url.protocol === 'https:';
  return {
    method: 'POST',
    hostname,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    agent: false,
    lookup: pinnedLookup(target.address, target.family),
    ...(secure ? tlsOptions(hostname, ca) : {}),
  };
}

/**
 * Verification is forced on (NODE_TLS_REJECT_UNAUTHORIZED=0 must not turn it off for customer
 * URLs; local receivers use NODE_EXTRA_CA_CERTS). SNI only for names, and without a trailing
 * dot: RFC 6066 allows neither an IP nor the dot. Certificate checks still use the hostname.
 */
/** `secureContext` reaches tls.connect through https.request (its types leave it out). */
type TlsRequestOptions = https.RequestOptions & Pick<ConnectionOptions, 'secureContext'>;

function tlsOptions(hostname: string, ca: string | Buffer | undefined): TlsRequestOptions {
  return {
    rejectUnauthorized: true,
    ...(isIP(hostname) === 0 ? { servername: hostname.replace(/\.$/, '') } : {}),
    secureContext: secureContextFor(ca),
  };
}

/**
 * One TLS context per set of trusted CAs, made once: building one loads and parses every root
 * certificate, which cost more than the rest of a connection's setup. Each connection still
 * verifies its peer against it (the context holds trust, not sessions).
 */
const secureContexts = new Map<string | Buffer | undefined, SecureContext>();
const MAX_SECURE_CONTEXTS = 16;

function secureContextFor(ca: string | Buffer | undefined): SecureContext {
  let context = secureContexts.get(ca);
  if (!context) {
    if (secureContexts.size >= MAX_SECURE_CONTEXTS) secureContexts.clear();
    // Without `ca`: the default roots, with NODE_EXTRA_CA_CERTS (how local receivers are trusted).
    context = createSecureContext(ca === undefined ? {} : { ca });
    secureContexts.set(ca, context);
  }
  return context;
}

/** Phases only feed the timeout message, so a customer can tell a dead host from a slow handler. */
function trackPhases(socket: Socket, exchange: Exchange, secure: boolean): void {
  socket.once('connect', () => {
    if (exchange.phase === 'connecting') exchange.phase = secure ? 'TLS handshake' : 'waiting for the response';
  });
  socket.once('secureConnect', () => {
    if (exchange.phase === 'TLS handshake') exchange.phase = 'waiting for the response';
  });
}

function readResponse(response: http.IncomingMessage, exchange: Exchange, finish: (error?: unknown) => void): void {
  exchange.phase = 'reading the response';
  if (response.statusCode !== undefined) exchange.statusCode = response.statusCode;
  if (response.statusMessage !== undefined) exchange.reasonPhrase = response.statusMessage;
  exchange.responseHeaders = headerRecord(response.rawHeaders);
  response.on('data', (chunk: Buffer) => {
    if (!exchange.body.push(chunk)) finish();
  });
  response.on('end', () => finish());
  response.on('error', finish);
  response.on('close', () => finish(new Error('The connection closed before the response was complete')));
}

function headerRecord(rawHeaders: readonly string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]?.toLowerCase() ?? '';
    const value = rawHeaders[index + 1] ?? '';
    const previous = record[name];
    record[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  return record;
}

function toResult(exchange: Exchange, requestHeaders: Record<string, string>, responseTimeMs: number): PostResult {
  const { statusCode, error } = exchange;
  const result: PostResult = {
    ok: error === undefined && statusCode !== undefined && statusCode >= 200 && statusCode < 300,
    requestHeaders,
    responseHeaders: exchange.responseHeaders,
    responseBody: exchange.body.text(),
    responseTimeMs,
  };
  if (statusCode !== undefined) result.statusCode = statusCode;
  if (exchange.reasonPhrase !== undefined) result.reasonPhrase = exchange.reasonPhrase;
  if (exchange.body.truncated) result.responseTruncated = true;
  if (error !== undefined) result.error = describeError(error, exchange.phase);
  if (error instanceof DeliveryTimeout || error instanceof ConnectTimeout) result.timedOut = true;
  if (error instanceof BlockedTargetError) {
    result.blocked = true;
    result.blockedReason = error.reason;
  }
  return result;
}

const NETWORK_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by the receiver',
  EHOSTUNREACH: 'Host unreachable',
  ENETUNREACH: 'Network unreachable',
  ETIMEDOUT: 'Connection timed out',
  ENOTFOUND: 'Host name not found',
  EAI_AGAIN: 'Temporary DNS failure',
  EPIPE: 'The receiver closed the connection while the request was being sent',
};

const MAX_MESSAGE_LENGTH = 300;

/** One line for the delivery log; the error's own message is kept where it helps (addresses, certificate names). */
function describeError(error: unknown, phase: Phase): string {
  if (error instanceof DeliveryTimeout) return `${error.message} (${phase})`;
  if (error instanceof ConnectTimeout) return error.message;
  if (error instanceof BlockedTargetError) return error.message;
  if (!(error instanceof Error)) return clip(String(error));
  const code = (error as NodeJS.ErrnoException).code;
  const known = code === undefined ? undefined : NETWORK_ERRORS[code];
  if (known !== undefined) return clip(`${known} (${error.message})`);
  if (isTlsError(code, error.message)) return clip(`TLS error: ${error.message}`);
  return clip(error.message);
}

/** Node's own TLS codes, OpenSSL's and the X.509 verification codes (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, …). */
function isTlsError(code: string | undefined, message: string): boolean {
  if (code !== undefined && /^ERR_(TLS|SSL|OSSL)_|CERT|SELF_SIGNED|UNABLE_TO_|SIGNATURE/.test(code)) return true;
  return /\b(SSL|TLS)\b|certificate/i.test(message);
}

function clip(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}
