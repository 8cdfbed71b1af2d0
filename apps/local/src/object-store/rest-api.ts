import { pipeline } from 'node:stream/promises';
import { decodeAwsChunked, isAwsChunked } from './aws-chunked';
import { drain, type Exchange, objectHeaders, type StoreContext, send } from './exchange';
import { invalidArgument, noSuchKey, notImplemented, S3Error } from './s3-error';
import { compareKeys, DEFAULT_CONTENT_TYPE, isValidBucketName } from './storage';
import { listBucketResult } from './xml';

/**
 * The S3 REST operations the AWS SDK v3 needs from the local store (path-style). Request
 * signatures are not verified: every caller of this stand-in runs on this machine with the
 * local dummy credentials, so a signature would prove nothing; the POST policy, which a browser
 * brings from our API, is verified in full (see post-policy.ts).
 */
export async function createBucket(context: StoreContext, exchange: Exchange, bucket: string): Promise<void> {
  await drain(exchange.req);
  if (!isValidBucketName(bucket)) {
    throw new S3Error('InvalidBucketName', 400, 'The specified bucket is not valid.', { BucketName: bucket });
  }
  if (!(await context.storage.createBucket(bucket))) {
    throw new S3Error(
      'BucketAlreadyOwnedByYou',
      409,
      'Your previous request to create the named bucket succeeded and you already own it.',
      { BucketName: bucket },
    );
  }
  send(exchange, 200, { location: `/${bucket}` });
}

export function headBucket(context: StoreContext, exchange: Exchange): void {
  send(exchange, 200, { 'x-amz-bucket-region': context.region ?? 'us-east-1' });
}

export async function putObject(context: StoreContext, exchange: Exchange, bucket: string, key: string) {
  const { req } = exchange;
  if (req.headers['x-amz-copy-source']) throw notImplemented('CopyObject');
  if (Buffer.byteLength(key) > 1024) throw new S3Error('KeyTooLongError', 400, 'Your key is too long');
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith('x-amz-meta-') && typeof value === 'string') metadata[name.slice('x-amz-meta-'.length)] = value;
  }
  // Keep the request open when the reader stops early, so the error can still be sent.
  const source = req.iterator({ destroyOnReturn: false });
  const info = await context.storage.put(bucket, key, isAwsChunked(req.headers) ? decodeAwsChunked(source) : source, {
    contentType: req.headers['content-type'] ?? DEFAULT_CONTENT_TYPE,
    metadata,
    lastModified: context.now() * 1000,
    maxBytes: context.maxObjectBytes,
    contentMd5: header(req.headers['content-md5']),
  });
  context.objectCreated('ObjectCreated:Put', info, principalOf(req.headers.authorization), exchange);
  send(exchange, 200, { etag: `"${info.md5}"`, 'x-amz-version-id': info.versionId });
}

/**
 * GetObject and HeadObject of the current version, or of `?versionId=` (a version that does not
 * exist is S3's 404 NoSuchVersion, https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
 */
export async function getObject(
  context: StoreContext,
  exchange: Exchange,
  bucket: string,
  key: string,
  versionId?: string,
) {
  const found = await context.storage.get(bucket, key, versionId);
  if (!found) throw versionId === undefined ? noSuchKey(key) : noSuchVersion(key, versionId);
  const { res, requestId } = exchange;
  res.writeHead(200, { 'x-amz-request-id': requestId, 'x-amz-id-2': requestId, ...objectHeaders(found.info) });
  await pipeline(found.body, res);
}

export async function headObject(
  context: StoreContext,
  exchange: Exchange,
  bucket: string,
  key: string,
  versionId?: string,
) {
  const info = await context.storage.head(bucket, key, versionId);
  if (!info) throw versionId === undefined ? noSuchKey(key) : noSuchVersion(key, versionId);
  send(exchange, 200, objectHeaders(info));
}

export async function deleteObject(context: StoreContext, exchange: Exchange, bucket: string, key: string) {
  await context.storage.delete(bucket, key);
  send(exchange, 204);
}

/** ListObjectsV2: prefix, delimiter, max-keys, start-after, continuation-token, encoding-type=url. */
export async function listObjectsV2(context: StoreContext, exchange: Exchange, bucket: string, query: URLSearchParams) {
  if (query.get('list-type') !== '2') throw notImplemented('ListObjects (version 1); use ListObjectsV2');
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') || undefined;
  const maxKeys = parseMaxKeys(query.get('max-keys'));
  const continuationToken = query.get('continuation-token') ?? undefined;
  const startAfter = query.get('start-after') ?? undefined;
  const after = continuationToken === undefined ? startAfter : decodeToken(continuationToken);
  const encodingType = query.get('encoding-type');
  if (encodingType !== null && encodingType !== 'url') {
    throw invalidArgument('encoding-type', encodingType, 'Invalid Encoding Method specified in Request');
  }

  const contents = [];
  const commonPrefixes: string[] = [];
  let last: string | undefined;
  let truncated = false;
  for (const info of await context.storage.list(bucket, prefix)) {
    const rest = info.key.slice(prefix.length);
    const cut = delimiter === undefined ? -1 : rest.indexOf(delimiter);
    const entry = cut < 0 ? info.key : prefix + rest.slice(0, cut + (delimiter?.length ?? 0));
    if (entry === last || (after !== undefined && compareKeys(entry, after) <= 0)) continue;
    if (contents.length + commonPrefixes.length >= maxKeys) {
      truncated = true;
      break;
    }
    if (cut < 0) contents.push(info);
    else commonPrefixes.push(entry);
    last = entry;
  }
  const body = listBucketResult({
    bucket,
    prefix,
    delimiter,
    maxKeys,
    startAfter,
    continuationToken,
    nextContinuationToken: truncated && last !== undefined ? Buffer.from(last).toString('base64url') : undefined,
    contents,
    commonPrefixes,
    urlEncoded: encodingType === 'url',
  });
  send(exchange, 200, { 'content-type': 'application/xml' }, body);
}

function parseMaxKeys(value: string | null): number {
  if (value === null) return 1000;
  if (!/^\d{1,9}$/.test(value))
    throw invalidArgument('max-keys', value, 'Provided max-keys not an integer or within integer range');
  return Math.min(Number(value), 1000);
}

function decodeToken(token: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) {
    throw invalidArgument('continuation-token', token, 'The continuation token provided is incorrect');
  }
  return Buffer.from(token, 'base64url').toString('utf8');
}

function noSuchVersion(key: string, versionId: string): S3Error {
  return new S3Error('NoSuchVersion', 404, 'The specified version does not exist.', { Key: key, VersionId: versionId });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The access key named in a SigV4 Authorization header (not verified), for event records. */
function principalOf(authorization: string | undefined): string {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? 'anonymous';
}
