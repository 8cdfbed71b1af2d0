import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logger } from '@svc/core';
import MailComposer from 'nodemailer/lib/mail-composer';
import { checkSignedRequest } from './sigv4-header';
import type { MailStorage } from './storage';

/**
 * The local Amazon SES (API v2) stand-in: `POST /v2/email/outbound-emails` (SendEmail) as the
 * SDK's SESv2Client sends it (REST-JSON, SigV4 for service `ses`), found through
 * AWS_ENDPOINT_URL_SESV2. It refuses what SES refuses, as the SESv2 API reference describes
 * SendEmail (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html; the
 * RawMessage and Destination data types; "Common Errors"), and keeps each accepted message as the
 * raw MIME SES would send, with its envelope recipients.
 *
 * Errors are REST-JSON: the status, `x-amzn-ErrorType: <name>` and `{"message": …}`, which the
 * SDK reads back as the named exception (BadRequestException 400, MessageRejected 400,
 * NotFoundException 404, TooManyRequestsException 429, InternalServiceErrorException 500, per the
 * reference's Errors section). What SES would answer word for word is unknowable here: the
 * messages are ours, the names and statuses AWS's.
 */
export interface MailServiceOptions {
  storage: MailStorage;
  /** Verified identities: e-mail addresses and domains a From may use. */
  identities: readonly string[];
  /** Secret access key by access key id (the local runtime's dummy credentials). */
  credentials: Readonly<Record<string, string>>;
  /** Unix seconds (the service clock): signatures are checked against it. */
  now: () => number;
  region: string;
}

/** What the next SendEmail calls answer instead of sending (tests' fault injection). */
export type MailFault = { mode: 'throttle' | 'error'; remaining: number };

export interface MailService {
  url: string;
  setFault(fault: MailFault | undefined): void;
  fault(): MailFault | undefined;
  close(): Promise<void>;
}

const SEND_EMAIL_PATH = '/v2/email/outbound-emails';
/**
 * "Using the SES v2 API or SMTP - Maximum message size (including attachments): 40 MB per message
 * (after base64 encoding)" (Service quotas in Amazon SES, https://docs.aws.amazon.com/ses/latest/dg/quotas.html).
 */
const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** RawMessage: "The length of any single line of text in the message can't exceed 1,000 characters." */
const MAX_LINE = 1000;
/** Destination: "The message may not include more than 50 recipients, across the To:, CC: and BCC: fields." */
const MAX_RECIPIENTS = 50;

class SesError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const badRequest = (message: string) => new SesError('BadRequestException', 400, message);

export async function startMailService(options: MailServiceOptions): Promise<MailService> {
  let fault: MailFault | undefined;
  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => handle(req, body))
      .then((answer) => send(res, 200, answer, options.now()))
      .catch((error: unknown) => {
        if (error instanceof SesError) return sendError(res, error, options.now());
        logger.error('The SES stand-in failed', { error: error as Error });
        return sendError(res, new SesError('InternalServiceErrorException', 500, 'Internal error'), options.now());
      });
  });

  async function handle(req: IncomingMessage, body: Buffer): Promise<unknown> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== SEND_EMAIL_PATH || req.method !== 'POST') {
      throw new SesError('NotFoundException', 404, `The SES stand-in serves SendEmail only, not ${req.method} ${path}`);
    }
    const problem = checkSignedRequest(
      { method: req.method, url: req.url ?? '/', headers: req.headers, body },
      { service: 'ses', credentials: options.credentials, now: options.now() },
    );
    if (problem) {
      const type =
        problem.kind === 'missing'
          ? 'MissingAuthenticationTokenException'
          : problem.kind === 'unknown_key'
            ? 'UnrecognizedClientException'
            : problem.kind === 'mismatch'
              ? 'InvalidSignatureException'
              : 'IncompleteSignatureException';
      throw new SesError(type, 403, problem.message);
    }
    if (fault) {
      const { mode } = fault;
      fault.remaining--;
      if (fault.remaining <= 0) fault = undefined;
      throw mode === 'error'
        ? new SesError('InternalServiceErrorException', 500, 'Injected fault: internal error')
        : new SesError('TooManyRequestsException', 429, 'Injected fault: Maximum sending rate exceeded.');
    }
    const request = parseRequest(body);
    const { raw, recipients, from } = await messageOf(request);
    checkIdentity(from, options.identities, options.region);
    const messageId = `${randomBytes(8).toString('hex')}-${randomBytes(4).toString('hex')}-local`;
    await options.storage.add({ raw, recipients, from, messageId, at: options.now() });
    return { MessageId: messageId };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setFault(next) {
      fault = next && next.remaining > 0 ? { ...next } : undefined;
    },
    fault: () => fault,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface SendEmailRequest {
  FromEmailAddress?: unknown;
  Destination?: { ToAddresses?: unknown; CcAddresses?: unknown; BccAddresses?: unknown };
  Content?: {
    Raw?: { Data?: unknown };
    Simple?: {
      Subject?: { Data?: unknown };
      Body?: { Text?: { Data?: unknown }; Html?: { Data?: unknown } };
    };
    Template?: unknown;
  };
}

function parseRequest(body: Buffer): SendEmailRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw badRequest('The request body must be an object');
  const request = parsed as SendEmailRequest;
  // Content is the one required member of SendEmail's request.
  if (!request.Content || typeof request.Content !== 'object') throw badRequest('Content is required');
  const kinds = (['Raw', 'Simple', 'Template'] as const).filter((kind) => request.Content?.[kind] !== undefined);
  if (kinds.length !== 1) throw badRequest('Content must contain exactly one of Raw, Simple or Template');
  return request;
}

function addresses(value: unknown, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw badRequest(`${field} must be a list of strings`);
  return value as string[];
}

/** The bare address of `Name <a@b>` or `a@b`. */
function bareAddress(value: string): string {
  const angle = /<([^>]+)>\s*$/.exec(value);
  return (angle?.[1] ?? value).trim();
}

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/** The header block of a raw message, unfolded, by lower-case name. */
function headersOf(head: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw badRequest('Illegal header line in the raw message');
    const name = line.slice(0, colon).trim().toLowerCase();
    map.set(name, [...(map.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return map;
}

const listOf = (values: string[] | undefined) =>
  (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => bareAddress(v))
    .filter(Boolean);

async function messageOf(request: SendEmailRequest): Promise<{ raw: Buffer; recipients: string[]; from: string }> {
  const destination = request.Destination ?? {};
  let recipients = [
    ...addresses(destination.ToAddresses, 'ToAddresses'),
    ...addresses(destination.CcAddresses, 'CcAddresses'),
    ...addresses(destination.BccAddresses, 'BccAddresses'),
  ].map(bareAddress);
  const fromField = typeof request.FromEmailAddress === 'string' ? request.FromEmailAddress : undefined;
  const content = request.Content ?? {};
  let raw: Buffer;
  let from = fromField ? bareAddress(fromField) : '';
  if (content.Raw !== undefined) {
    const data = content.Raw?.Data;
    // The blob travels base64 in the JSON body ("The raw data of the message needs to base64-encoded").
    if (typeof data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) {
      throw badRequest('Content.Raw.Data must be base64');
    }
    if (data.length > MAX_MESSAGE_BYTES)
      throw new SesError('MessageRejected', 400, 'Message length is more than 40 MB.');
    raw = Buffer.from(data, 'base64');
    if (raw.length === 0) throw badRequest('Content.Raw.Data is empty');
    const text = raw.toString('latin1');
    const split = /\r?\n\r?\n/.exec(text);
    // "The message has to contain a header and a body, separated by one blank line."
    if (!split) throw badRequest('The raw message must have a header and a body separated by a blank line');
    if (text.split(/\r?\n/).some((line) => line.length > MAX_LINE)) {
      throw badRequest(`A line of the raw message is longer than ${MAX_LINE} characters`);
    }
    const headers = headersOf(text.slice(0, split.index));
    if (!from) from = listOf(headers.get('from'))[0] ?? '';
    if (recipients.length === 0)
      recipients = [...listOf(headers.get('to')), ...listOf(headers.get('cc')), ...listOf(headers.get('bcc'))];
  } else if (content.Simple !== undefined) {
    const simple = content.Simple ?? {};
    if (typeof simple.Subject?.Data !== 'string') throw badRequest('Content.Simple.Subject.Data is required');
    const textBody = simple.Body?.Text?.Data;
    const htmlBody = simple.Body?.Html?.Data;
    if (typeof textBody !== 'string' && typeof htmlBody !== 'string')
      throw badRequest('Content.Simple.Body needs Text or Html');
    if (!from) throw badRequest('FromEmailAddress is required for Simple content');
    raw = await new MailComposer({
      from,
      to: recipients,
      subject: simple.Subject.Data,
      ...(typeof textBody === 'string' ? { text: textBody } : {}),
      ...(typeof htmlBody === 'string' ? { html: htmlBody } : {}),
    })
      .compile()
      .build();
  } else {
    throw badRequest('The SES stand-in does not send Template content');
  }
  if (Math.ceil(raw.length / 3) * 4 > MAX_MESSAGE_BYTES) {
    throw new SesError('MessageRejected', 400, 'Message length is more than 40 MB.');
  }
  if (!from) throw badRequest('The message has no From address (FromEmailAddress or a From header)');
  if (recipients.length === 0) throw badRequest('The message has no recipients (Destination or To, Cc, Bcc headers)');
  if (recipients.length > MAX_RECIPIENTS)
    throw new SesError('MessageRejected', 400, `Recipient count exceeds ${MAX_RECIPIENTS}.`);
  for (const address of [from, ...recipients]) {
    if (!ADDRESS.test(address)) throw badRequest(`Illegal address: ${address}`);
  }
  return { raw, recipients, from };
}

/**
 * SES sends only from a verified identity, the address itself or its domain; otherwise
 * MessageRejected ("Email address is not verified. The following identities failed the check in
 * region …", the SES developer guide's troubleshooting of this error).
 */
function checkIdentity(from: string, identities: readonly string[], region: string): void {
  const lower = from.toLowerCase();
  const domain = lower.slice(lower.lastIndexOf('@') + 1);
  if (identities.some((identity) => identity.toLowerCase() === lower || identity.toLowerCase() === domain)) return;
  throw new SesError(
    'MessageRejected',
    400,
    `Email address is not verified. The following identities failed the check in region ${region.toUpperCase()}: ${from}`,
  );
}

/**
 * The Date header by the service clock: the SDK corrects its clock skew from an error's Date
 * (as it must against AWS), so a real-time Date would move its signatures off the service clock.
 */
const dateHeader = (now: number) => new Date(now * 1000).toUTCString();

function send(res: ServerResponse, status: number, body: unknown, now: number): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    date: dateHeader(now),
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomBytes(16).toString('hex'),
  });
  res.end(text);
}

function sendError(res: ServerResponse, error: SesError, now: number): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify({ message: error.message });
  res.writeHead(error.status, {
    date: dateHeader(now),
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-errortype': error.type,
    'x-amzn-requestid': randomBytes(16).toString('hex'),
  });
  res.end(text);
}

/** The body, refused past a little more than SES's largest message (base64 in JSON). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const limit = Math.ceil((MAX_MESSAGE_BYTES * 4) / 3) + 64 * 1024;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new SesError('MessageRejected', 400, 'Message length is more than 40 MB.'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
