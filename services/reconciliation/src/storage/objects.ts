import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { sdkClient } from '@svc/core';

/**
 * The reconciliation bucket: uploaded files under `uploads/<organisation>/<configuration>/`,
 * report results under `reports/<organisation>/`. The bucket is `SVC_RECONCILIATION_BUCKET`;
 * the client finds S3 (or the local stand-in, through AWS_ENDPOINT_URL_S3) as every SDK client
 * does. The stand-in is addressed path-style, S3 itself virtual-hosted.
 *
 * The S3 SDK is loaded at the first call that needs it, not at cold start: of the reconciliation
 * API's operations only upload parameters, a blueprint's execution and report results touch S3.
 * The client goes through `sdkClient` like every other: traced where the stage traces calls.
 */
type S3Sdk = typeof import('./s3-sdk') & { client: S3Client };

let loading: Promise<S3Sdk> | undefined;

function s3Sdk(): Promise<S3Sdk> {
  if (!loading) {
    const started = import('./s3-sdk').then((sdk) => ({
      ...sdk,
      client: sdkClient(new sdk.S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) })),
    }));
    loading = started;
    // A failed load is tried again at the next call, not remembered (unless a newer one started).
    started.catch(() => {
      if (loading === started) loading = undefined;
    });
  }
  return loading;
}

/** The S3 client (made, and its SDK loaded, at the first call). */
export async function s3(): Promise<S3Client> {
  return (await s3Sdk()).client;
}

/** Forgets the client (the local runtime or a test changed the endpoint). */
export function resetObjectClient(): void {
  loading = undefined;
}

export function bucketName(): string {
  const bucket = process.env.SVC_RECONCILIATION_BUCKET;
  if (!bucket) throw new Error('SVC_RECONCILIATION_BUCKET is not set');
  return bucket;
}

export const UPLOAD_ROOT = 'uploads';
export const REPORT_ROOT = 'reports';

/** Where one configuration's files go: the prefix a presigned POST is pinned to. */
export function uploadPrefix(organisationUuid: string, configurationUuid: string): string {
  return `${UPLOAD_ROOT}/${organisationUuid}/${configurationUuid}/`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const UPLOAD_KEY = new RegExp(`^${UPLOAD_ROOT}/(${UUID})/(${UUID})/.+$`, 's');

/** The organisation and configuration an uploaded key belongs to, from its prefix. */
export function parseUploadKey(key: string): { organisationUuid: string; configurationUuid: string } | undefined {
  const match = UPLOAD_KEY.exec(key);
  return match?.[1] && match[2] ? { organisationUuid: match[1], configurationUuid: match[2] } : undefined;
}

/**
 * An object's body as a stream, or undefined when it is gone (deleted, expired, or — with
 * `etag` — replaced by other content since it was announced). `versionId` reads that version.
 */
export async function readObject(
  key: string,
  expect: { versionId?: string; etag?: string } = {},
): Promise<{ body: Readable; size: number; etag: string } | undefined> {
  const { client, GetObjectCommand } = await s3Sdk();
  try {
    const out = await client.send(
      new GetObjectCommand({
        Bucket: bucketName(),
        Key: key,
        ...(expect.versionId ? { VersionId: expect.versionId } : {}),
        ...(expect.etag && !expect.versionId ? { IfMatch: `"${expect.etag}"` } : {}),
      }),
    );
    if (!out.Body) throw new Error(`Object ${key} has no body`);
    return { body: out.Body as Readable, size: out.ContentLength ?? 0, etag: (out.ETag ?? '').replaceAll('"', '') };
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (name === 'NoSuchKey' || name === 'NoSuchVersion' || name === 'PreconditionFailed' || status === 412) {
      return undefined;
    }
    throw error;
  }
}

/** Stores an object; its ETag (without quotes) and, in a versioned bucket, the version it made. */
export async function writeObject(
  key: string,
  body: Buffer | string,
  contentType: string,
): Promise<{ etag: string; versionId?: string }> {
  const { client, PutObjectCommand } = await s3Sdk();
  const out = await client.send(
    new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: body, ContentType: contentType }),
  );
  return { etag: (out.ETag ?? '').replaceAll('"', ''), ...(out.VersionId ? { versionId: out.VersionId } : {}) };
}
