/**
 * The S3 SDK's parts this domain uses, as the one module `objects.ts` loads with `import()`:
 * esbuild keeps every export of a package loaded that way, so importing the package itself would
 * carry all of S3's commands into the chunk (112 instead of these).
 */
export { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
