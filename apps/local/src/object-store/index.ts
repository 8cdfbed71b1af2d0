export { decodeAwsChunked } from './aws-chunked';
export { encodeNotificationKey, objectCreatedRecord } from './notification';
export { type ConditionSubject, conditionHolds, describeCondition, lengthRange } from './policy-conditions';
export { decodePolicy, type PolicyCondition, type PostPolicy } from './policy-document';
export { type AuthorizedPost, checkFileSize, checkPostForm, type PostFormInput, verifyPostPolicy } from './post-policy';
export { S3Error } from './s3-error';
export { type ObjectStore, type ObjectStoreOptions, startObjectStore } from './server';
export { parseCredential, signingKey, signPolicy } from './sigv4';
