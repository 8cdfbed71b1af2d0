import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logger } from '@svc/core';
import type { S3EventRecord } from 'aws-lambda';
import { browserUpload } from './browser-upload';
import { createDiskStorage } from './disk-storage';
import { type Exchange, type StoreContext, sendError } from './exchange';
import { createMemoryStorage } from './memory-storage';
import { createSequencer, objectCreatedRecord } from './notification';
import * as rest from './rest-api';
import { noSuchBucket, notImplemented, S3Error } from './s3-error';
import { isValidBucketName } from './storage';

/**
 * The local S3 stand-in: an HTTP server on 127.0.0.1 speaking path-style S3
 * (`http://127.0.0.1:<port>/<bucket>/<key>`) for the AWS SDK (`forcePathStyle: true`) and for
 * browser POST uploads, which it verifies like S3. Every stored object is announced through
 * `onObjectCreated` with an S3 event record, as S3 would notify the processing Lambda.
 */
export interface ObjectStoreOptions {
  /** 0 or absent: any free port. */
  port?: number;
  /** A directory to keep objects in, or `:memory:`. */
  dataDir: string;
  /** Buckets to create at start (existing ones are kept). */
  buckets: string[];
  /** Secret access key by access key id, for POST policy signatures. */
  credentials: Readonly<Record<string, string>>;
  /** Current time in Unix seconds: the local runtime passes the service clock. */
  now: () => number;
  /** Called after every stored PUT or POST, without waiting (S3 notifies asynchronously too). */
  onObjectCreated?: (record: S3EventRecord) => void | Promise<void>;
  /** When set, POST credentials must be scoped to this region; records carry it (default us-east-1). */
  region?: string;
  /** Largest object accepted (default 256 MiB: S3 allows 5 GiB, a laptop needs less). */
  maxObjectBytes?: number;
}

export interface ObjectStore {
  url: string;
  port: number;
  close(): Promise<void>;
}

const BUCKET_QUERY = new Set(['list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after']);
/** GetObject and HeadObject of a version. */
const OBJECT_READ_QUERY = new Set(['versionId']);
const SHARED_QUERY = new Set(['x-id', 'encoding-type', 'fetch-owner']);

export async function startObjectStore(options: ObjectStoreOptions): Promise<ObjectStore> {
  const storage = options.dataDir === ':memory:' ? createMemoryStorage() : createDiskStorage(options.dataDir);
  for (const bucket of options.buckets) {
    if (!isValidBucketName(bucket)) throw new Error(`Invalid bucket name: ${bucket}`);
    await storage.createBucket(bucket);
  }
  const sequencer = createSequencer();
  const context: StoreContext = {
    storage,
    credentials: options.credentials,
    now: options.now,
    region: options.region,
    maxObjectBytes: options.maxObjectBytes ?? 256 * 1024 * 1024,
    objectCreated(event, info, principalId, exchange) {
      const record = objectCreatedRecord(
        {
          event,
          info,
          region: options.region ?? 'us-east-1',
          eventTime: options.now() * 1000,
          principalId,
          sourceIp: exchange.req.socket.remoteAddress ?? '127.0.0.1',
          requestId: exchange.requestId,
        },
        sequencer(),
      );
      try {
        Promise.resolve(options.onObjectCreated?.(record)).catch(reportNotificationFailure);
      } catch (error) {
        reportNotificationFailure(error);
      }
    },
  };

  const server = createServer((req, res) => {
    const exchange: Exchange = { req, res, requestId: randomBytes(8).toString('hex').toUpperCase() };
    route(context, exchange).catch((error: unknown) => fail(exchange, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function route(context: StoreContext, exchange: Exchange): Promise<void> {
  const { req } = exchange;
  const rawUrl = req.url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
  const { bucket, key } = parsePath(path);
  const method = req.method ?? 'GET';
  if (bucket === '') throw notImplemented('ListBuckets');
  if (key === '' && method === 'PUT') {
    refuseQuery(query, new Set());
    return rest.createBucket(context, exchange, bucket);
  }
  if (!context.storage.bucketExists(bucket)) throw noSuchBucket(bucket);

  if (key === '') {
    refuseQuery(query, method === 'GET' ? BUCKET_QUERY : new Set());
    if (method === 'HEAD') return rest.headBucket(context, exchange);
    if (method === 'GET') return rest.listObjectsV2(context, exchange, bucket, query);
    if (method === 'POST') return browserUpload(context, exchange, bucket);
    throw methodNotAllowed(method, 'BUCKET');
  }
  refuseQuery(query, method === 'GET' || method === 'HEAD' ? OBJECT_READ_QUERY : new Set());
  const versionId = query.get('versionId') ?? undefined;
  if (method === 'PUT') return rest.putObject(context, exchange, bucket, key);
  if (method === 'GET') return rest.getObject(context, exchange, bucket, key, versionId);
  if (method === 'HEAD') return rest.headObject(context, exchange, bucket, key, versionId);
  if (method === 'DELETE') return rest.deleteObject(context, exchange, bucket, key);
  throw methodNotAllowed(method, 'OBJECT');
}

/** `/<bucket>/<key>`: the key is everything after the bucket, percent-decoded once (`+` stays `+`). */
function parsePath(path: string): { bucket: string; key: string } {
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  const slash = trimmed.indexOf('/');
  try {
    if (slash < 0) return { bucket: decodeURIComponent(trimmed), key: '' };
    return { bucket: decodeURIComponent(trimmed.slice(0, slash)), key: decodeURIComponent(trimmed.slice(slash + 1)) };
  } catch {
    throw new S3Error('InvalidURI', 400, "Couldn't parse the specified URI.", { URI: path });
  }
}

/** Sub-resources (`?acl`, `?uploads`, `?tagging`, …) are operations this stand-in does not have. */
function refuseQuery(query: URLSearchParams, allowed: ReadonlySet<string>): void {
  for (const name of query.keys()) {
    if (!allowed.has(name) && !SHARED_QUERY.has(name) && !name.startsWith('response-')) {
      throw notImplemented(`the '${name}' sub-resource`);
    }
  }
}

function methodNotAllowed(method: string, resourceType: string): S3Error {
  return new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.', {
    Method: method,
    ResourceType: resourceType,
  });
}

function fail(exchange: Exchange, error: unknown): void {
  const { res } = exchange;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof S3Error) {
    sendError(exchange, error);
    return;
  }
  logger.error('Object store request failed', { requestId: exchange.requestId, error: asError(error) });
  sendError(exchange, new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.'));
}

function reportNotificationFailure(error: unknown): void {
  logger.error('Object store onObjectCreated failed', { error: asError(error) });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
