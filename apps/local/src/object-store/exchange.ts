import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ObjectCreatedEvent } from './notification';
import type { S3Error } from './s3-error';
import { type ObjectInfo, type ObjectStorage, OVERFLOW_DRAIN_BYTES } from './storage';
import { errorDocument } from './xml';

/** One request to the local object store and what the operations share. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
}

export interface StoreContext {
  storage: ObjectStorage;
  credentials: Readonly<Record<string, string>>;
  /** Current service time in Unix seconds. */
  now: () => number;
  region: string | undefined;
  /** Largest object accepted by PUT or POST. */
  maxObjectBytes: number;
  objectCreated(event: ObjectCreatedEvent, info: ObjectInfo, principalId: string, exchange: Exchange): void;
}

export function send(
  exchange: Exchange,
  status: number,
  headers: Record<string, string | number> = {},
  body?: string | Buffer,
): void {
  const { req, res, requestId } = exchange;
  if (leavesBodyUnread(req)) res.setHeader('connection', 'close');
  const payload = req.method === 'HEAD' || body === undefined ? undefined : body;
  res.writeHead(status, {
    'x-amz-request-id': requestId,
    'x-amz-id-2': requestId,
    ...headers,
    ...(payload === undefined ? {} : { 'content-length': Buffer.byteLength(payload) }),
  });
  res.end(payload);
}

export function sendError(exchange: Exchange, error: S3Error): void {
  send(exchange, error.statusCode, { 'content-type': 'application/xml' }, errorDocument(error, exchange.requestId));
}

/**
 * A body we stopped reading part-way, or a large one we never started on, is not read to its end
 * (Node would drain it to reuse the connection): the connection closes after the answer instead.
 */
function leavesBodyUnread(req: IncomingMessage): boolean {
  if (req.readableEnded) return false;
  if (req.readableDidRead) return true;
  const declared = Number(req.headers['content-length'] ?? 0);
  return req.headers['transfer-encoding'] !== undefined || !(declared <= OVERFLOW_DRAIN_BYTES);
}

/** The headers S3 describes an object with (GetObject, HeadObject). */
export function objectHeaders(info: ObjectInfo): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'content-type': info.contentType,
    'content-length': info.size,
    etag: `"${info.md5}"`,
    'last-modified': new Date(info.lastModified).toUTCString(),
    'accept-ranges': 'bytes',
    'x-amz-version-id': info.versionId,
  };
  for (const [name, value] of Object.entries(info.metadata)) headers[`x-amz-meta-${name}`] = headerSafe(value);
  return headers;
}

/** Metadata that is not printable ASCII goes out RFC 2047-encoded, as S3 does; HTTP headers cannot carry it raw. */
function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Reads and drops a body the operation has no use for. */
export function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise((done) => {
    req.once('end', done);
    req.once('close', done);
    req.resume();
  });
}
