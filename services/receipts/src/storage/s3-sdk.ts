/**
 * The S3 SDK's parts the receipts domain uses, loaded with `import()` at the first document: a
 * package loaded that way keeps every export in its chunk, so only these are named.
 */
export { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
