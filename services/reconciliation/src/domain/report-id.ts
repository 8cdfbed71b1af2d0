import { derivedUuid } from '@svc/core';

/** The report of one stored file: the same file (bucket, key, ETag) always has the same report. */
export function reportUuidOf(bucket: string, key: string, etag: string): string {
  return derivedUuid('reconciliation-report', bucket, key, etag.replaceAll('"', ''));
}
