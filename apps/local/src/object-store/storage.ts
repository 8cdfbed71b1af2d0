import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { entityTooLarge, entityTooSmall, S3Error } from './s3-error';

/**
 * Where the local object store keeps objects: in memory (`:memory:`) or under a directory. Both
 * keep the same metadata S3 returns (size, MD5 ETag, content type, last modified, user metadata),
 * and both store nothing unless the whole body was received and passed its checks.
 */
export interface ObjectInfo {
  bucket: string;
  key: string;
  size: number;
  /** MD5 of the body, hex, without the quotes the ETag header carries. */
  md5: string;
  contentType: string;
  /** Unix milliseconds. */
  lastModified: number;
  /** User metadata (`x-amz-meta-*`) by lower-cased name without the prefix. */
  metadata: Record<string, string>;
  /**
   * Every bucket here is versioned, as the reconciliation bucket is in AWS: each write is a new
   * version with an id of its own, older versions stay readable by id, and S3's notifications
   * name the version (`s3.object.versionId`).
   */
  versionId: string;
}

/**
 * A new version id: opaque, URL-safe, 32 characters. S3's are opaque strings of up to 1,024 bytes
 * ("Version IDs are Unicode, UTF-8 encoded, URL-ready, opaque strings that are no more than 1,024
 * bytes long", https://docs.aws.amazon.com/AmazonS3/latest/userguide/versioning-workflows.html).
 */
export function newVersionId(): string {
  return randomBytes(24).toString('base64url');
}

export interface PutOptions {
  contentType: string;
  metadata: Record<string, string>;
  lastModified: number;
  /** Largest body accepted: bytes past it are read and dropped, then EntityTooLarge. */
  maxBytes: number;
  minBytes?: number;
  /** Base64 MD5 the client declared (Content-MD5); a mismatch is BadDigest. */
  contentMd5?: string | undefined;
}

/** A received body not yet visible: `commit` makes it the object, `discard` forgets it. */
export interface StagedObject {
  info: ObjectInfo;
  commit(): Promise<ObjectInfo>;
  discard(): Promise<void>;
}

export interface ObjectStorage {
  bucketExists(bucket: string): boolean;
  /** False when the bucket already existed. */
  createBucket(bucket: string): Promise<boolean>;
  /** Receives a body (see receiveBody) without making it visible yet. */
  stage(bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<StagedObject>;
  /** stage + commit. */
  put(bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<ObjectInfo>;
  /** The current version, or with `versionId` that version (current or not). */
  head(bucket: string, key: string, versionId?: string): Promise<ObjectInfo | undefined>;
  get(bucket: string, key: string, versionId?: string): Promise<{ info: ObjectInfo; body: Readable } | undefined>;
  /** Hides the key (S3's delete marker in a versioned bucket): its versions stay readable by id. */
  delete(bucket: string, key: string): Promise<void>;
  /** Objects whose key starts with `prefix`, in S3's order (UTF-8 bytes). */
  list(bucket: string, prefix: string): Promise<ObjectInfo[]>;
}

export const DEFAULT_CONTENT_TYPE = 'binary/octet-stream';

/**
 * Past its limit a body is read and dropped for at most this many more bytes, so a slightly too
 * large upload still gets a clean answer; beyond it reading stops and the connection is closed
 * after the error, as S3 does.
 */
export const OVERFLOW_DRAIN_BYTES = 1024 * 1024;

/** S3's bucket naming rules; they also keep a bucket name safe as a directory name. */
export function isValidBucketName(name: string): boolean {
  return /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) && !name.includes('..') && !/^\d+\.\d+\.\d+\.\d+$/.test(name);
}

export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Reads a body, handing each chunk to `sink` while the total stays within `maxBytes`; nothing past
 * it is kept (see OVERFLOW_DRAIN_BYTES). Size, MD5 and Content-MD5 are checked at the end; the
 * caller stores nothing when this throws.
 */
export async function receiveBody(
  body: AsyncIterable<Uint8Array>,
  options: Pick<PutOptions, 'maxBytes' | 'minBytes' | 'contentMd5'>,
  sink: (chunk: Uint8Array) => unknown,
): Promise<{ size: number; md5: string }> {
  const hash = createHash('md5');
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > options.maxBytes + OVERFLOW_DRAIN_BYTES) throw entityTooLarge(size, options.maxBytes);
    if (size > options.maxBytes) continue;
    hash.update(chunk);
    await sink(chunk);
  }
  if (size > options.maxBytes) throw entityTooLarge(size, options.maxBytes);
  if (size < (options.minBytes ?? 0)) throw entityTooSmall(size, options.minBytes ?? 0);
  const digest = hash.digest();
  if (options.contentMd5 !== undefined && digest.toString('base64') !== options.contentMd5) {
    throw new S3Error('BadDigest', 400, 'The Content-MD5 you specified did not match what we received.');
  }
  return { size, md5: digest.toString('hex') };
}

/** Runs writes to one object one after another, so concurrent PUTs of a key cannot interleave. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(id) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(work);
    this.tails.set(id, current);
    try {
      return await current;
    } finally {
      if (this.tails.get(id) === current) this.tails.delete(id);
    }
  }
}
