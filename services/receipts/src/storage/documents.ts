import { sdkClient } from '@svc/core';

/**
 * The receipts bucket (`SVC_RECEIPTS_BUCKET`: versioned, encrypted, kept as long as the stage
 * keeps tax records): one PDF per receipt and status, `receipts/<org>/<year>/<uuid>-<status>.pdf`,
 * written once when it is first asked for and read back after. A receipt's content never changes
 * once issued (a change voids it and issues another), so the stored document is always its own;
 * voiding writes the void one beside it. Locally the object-store stand-in serves the same API
 * (AWS_ENDPOINT_URL_S3, path-style).
 */
type Sdk = typeof import('./s3-sdk');

let loading: Promise<{ sdk: Sdk; client: InstanceType<Sdk['S3Client']> }> | undefined;

function s3() {
  loading ??= import('./s3-sdk').then((sdk) => ({
    sdk,
    client: sdkClient(new sdk.S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) })),
  }));
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** Forgets the client (the local runtime or a test changed the endpoint). */
export function resetDocumentClient(): void {
  loading = undefined;
}

function bucket(): string {
  const name = process.env.SVC_RECEIPTS_BUCKET;
  if (!name) throw new Error('SVC_RECEIPTS_BUCKET is not set');
  return name;
}

export function documentKey(receipt: { organisation_uuid: string; year: number; uuid: string; status: string }) {
  return `receipts/${receipt.organisation_uuid}/${receipt.year}/${receipt.uuid}-${receipt.status}.pdf`;
}

/** The stored document, or undefined when none was written yet. */
export async function readDocument(key: string): Promise<Uint8Array | undefined> {
  const { sdk, client } = await s3();
  try {
    const out = await client.send(new sdk.GetObjectCommand({ Bucket: bucket(), Key: key }));
    return out.Body ? await out.Body.transformToByteArray() : undefined;
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
    throw error;
  }
}

export async function writeDocument(key: string, bytes: Uint8Array): Promise<void> {
  const { sdk, client } = await s3();
  await client.send(
    new sdk.PutObjectCommand({ Bucket: bucket(), Key: key, Body: bytes, ContentType: 'application/pdf' }),
  );
}
