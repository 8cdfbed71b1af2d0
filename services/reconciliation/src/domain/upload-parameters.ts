import { assertWholeOrganisationGrant, NotFoundError, newUuid, now, type Principal } from '@svc/core';
import { findSourceConfiguration } from '../repository/source-configuration-repository';
import { bucketName, s3, uploadPrefix } from '../storage/objects';

/** A presigned POST is valid this long (contract: 15 minutes). */
export const UPLOAD_EXPIRY_SECONDS = 15 * 60;
/** The largest file one upload may carry (bytes); an empty file is refused too. */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/**
 * Upload parameters: an S3 presigned POST (SigV4) whose policy pins the bucket,
 * the key prefix of the organisation and source configuration (one fresh folder per request, the
 * browser's file name after it), a content length of 1 byte to 100 MiB and a 15-minute expiry.
 * The form posts `inputs` as fields, then the file, to `attributes.action`.
 */
export async function uploadParameters(principal: Promise<Principal>, configurationUuid: string) {
  const [caller, configuration] = await Promise.all([principal, findSourceConfiguration(configurationUuid)]);
  if (!configuration) throw new NotFoundError('Reconciliation source configuration not found');
  assertWholeOrganisationGrant(caller, configuration.organisation_uuid);
  const prefix = `${uploadPrefix(configuration.organisation_uuid, configuration.uuid)}${newUuid()}/`;
  const bucket = bucketName();
  // Signed at the service clock's time, like every time-dependent rule (the local runtime moves it).
  // The presigner is loaded here, the one operation that uses it (not at cold start).
  const [client, { createPresignedPost }] = await Promise.all([s3(), import('@aws-sdk/s3-presigned-post')]);
  client.config.systemClockOffset = now() * 1000 - Date.now();
  const { url, fields } = await createPresignedPost(client, {
    Bucket: bucket,
    Key: `${prefix}\${filename}`,
    Conditions: [{ bucket }, ['starts-with', '$key', prefix], ['content-length-range', 1, MAX_UPLOAD_BYTES]],
    Expires: UPLOAD_EXPIRY_SECONDS,
  });
  const { bucket: _bucket, ...inputs } = fields;
  return {
    inputs,
    attributes: { action: url, method: 'POST', enctype: 'multipart/form-data' },
    expires: now() + UPLOAD_EXPIRY_SECONDS,
  };
}
