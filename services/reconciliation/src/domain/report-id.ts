import { derivedUuid } from '@svc/core';

/**
 * The report of one stored file: the same stored content always has the same report. In a
 * versioned bucket (every deployed stage's, and the local store's) the version names it, so a key
 * written twice gives two reports; an object stored without one is named by its ETag alone.
 * The processor (from S3's notification) and the blueprint execution (from PutObject's answer)
 * both name a report this way, so the uuid the blueprint answers is the report's.
 */
export function reportUuidOf(bucket: string, key: string, etag: string, versionId?: string): string {
  const content = etag.replaceAll('"', '');
  return derivedUuid('reconciliation-report', bucket, key, versionId ? `${content}/${versionId}` : content);
}
