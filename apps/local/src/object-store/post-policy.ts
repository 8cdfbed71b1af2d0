import { conditionHolds, describeCondition, lengthRange, uncoveredFields } from './policy-conditions';
import { decodePolicy, type PostPolicy } from './policy-document';
import {
  entityTooLarge,
  entityTooSmall,
  invalidArgument,
  missingPostField,
  policyDenied,
  S3Error,
  signatureDoesNotMatch,
} from './s3-error';
import { parseAmzDate, parseCredential, SIGV4_ALGORITHM, signaturesEqual, signPolicy } from './sigv4';

/**
 * Authorisation of a browser-style POST upload the way S3 does it for SigV4 ("Browser-Based
 * Uploads Using POST (AWS Signature Version 4)"): the signature over the posted base64 policy, the
 * policy's expiry, each of its conditions and the rule that every form field is named by one.
 * Pure functions of the form and the clock, so they are tested without a server.
 */
export interface PostFormInput {
  /** Form fields by lower-cased name (S3 field names are case-insensitive), without `file`. */
  fields: ReadonlyMap<string, string>;
  /** The bucket named by the request's URL. */
  bucket: string;
  /** The file part's filename, substituted for `${filename}` in `key`. */
  filename?: string | undefined;
  /** Secret access key by access key id. */
  credentials: Readonly<Record<string, string>>;
  /** Current time in Unix seconds (the service clock). */
  now: number;
  /** When set, the credential's region must be this one (S3 refuses other regions). */
  region?: string | undefined;
}

export interface AuthorizedPost {
  key: string;
  accessKeyId: string;
  contentType: string | undefined;
  /** `x-amz-meta-*` fields, by lower-cased name without the prefix. */
  metadata: Record<string, string>;
  successActionStatus: 200 | 201 | 204;
  successActionRedirect: string | undefined;
  /** Byte sizes the policy allows for the file (0..Infinity without content-length-range). */
  sizeRange: { min: number; max: number };
  policy: PostPolicy;
}

const REQUIRED_FIELDS = ['key', 'policy', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature'];
const MAX_KEY_BYTES = 1024;
/** S3 puts the file part's name where the key says `${filename}`. */
const FILENAME_VARIABLE = ['$', '{filename}'].join('');

/** Every check that can be made before the file arrives; throws the S3Error S3 would answer. */
export function checkPostForm(input: PostFormInput): AuthorizedPost {
  const { fields } = input;
  const field = (name: string) => fields.get(name) ?? '';
  for (const name of REQUIRED_FIELDS) if (!fields.has(name)) throw missingPostField(name);

  if (field('x-amz-algorithm') !== SIGV4_ALGORITHM) {
    throw invalidArgument('x-amz-algorithm', field('x-amz-algorithm'), `Only ${SIGV4_ALGORITHM} is supported.`);
  }
  const credential = parseCredential(field('x-amz-credential'));
  if (credential?.service !== 's3') {
    throw invalidArgument('x-amz-credential', field('x-amz-credential'), 'The credential is malformed.');
  }
  const signedAt = parseAmzDate(field('x-amz-date'));
  if (signedAt === undefined || !field('x-amz-date').startsWith(credential.date)) {
    throw invalidArgument('x-amz-date', field('x-amz-date'), 'X-Amz-Date must be the date of the credential scope.');
  }
  if (input.region !== undefined && credential.region !== input.region) {
    throw invalidArgument(
      'x-amz-credential',
      field('x-amz-credential'),
      `The region '${credential.region}' is wrong; expecting '${input.region}'`,
    );
  }
  const secret = input.credentials[credential.accessKeyId];
  if (secret === undefined) {
    throw new S3Error('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist in our records.', {
      AWSAccessKeyId: credential.accessKeyId,
    });
  }
  const policyText = field('policy');
  const expected = signPolicy(policyText, secret, credential.date, credential.region, 's3');
  if (!signaturesEqual(expected, field('x-amz-signature'))) throw signatureDoesNotMatch(policyText);

  const policy = decodePolicy(policyText);
  if (signedAt > input.now) throw policyDenied('Policy not yet valid: x-amz-date is later than the current time.');
  if (input.now * 1000 >= policy.expiration) throw policyDenied('Policy expired.');

  // A function replacement: `$&`, `$'` and the like in a file name are literal, as in S3.
  const key = field('key').replaceAll(FILENAME_VARIABLE, () => input.filename ?? '');
  if (key.length === 0) throw invalidArgument('key', '', 'User key must have a length greater than 0.');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new S3Error('KeyTooLongError', 400, 'Your key is too long');

  const subject = {
    field: (name: string) => (name === 'bucket' ? input.bucket : name === 'key' ? key : field(name)),
    size: 0,
  };
  for (const condition of policy.conditions) {
    if (condition.kind === 'content-length-range') continue;
    if (!conditionHolds(condition, subject)) {
      throw policyDenied(`Policy Condition failed: ${describeCondition(condition)}`);
    }
  }
  const extra = uncoveredFields(fields.keys(), policy.conditions);
  if (extra.length > 0) throw policyDenied(`Extra input fields: ${extra.join(', ')}`);

  return {
    key,
    accessKeyId: credential.accessKeyId,
    contentType: fields.get('content-type'),
    metadata: userMetadata(fields),
    successActionStatus: successStatus(field('success_action_status')),
    successActionRedirect: fields.get('success_action_redirect') ?? fields.get('redirect'),
    sizeRange: lengthRange(policy.conditions) ?? { min: 0, max: Number.POSITIVE_INFINITY },
    policy,
  };
}

/** The file's size against the policy's content-length-range: S3's EntityTooLarge / EntityTooSmall. */
export function checkFileSize(size: number, range: { min: number; max: number }): void {
  if (size > range.max) throw entityTooLarge(size, range.max);
  if (size < range.min) throw entityTooSmall(size, range.min);
}

/** The whole verification of a POST upload whose file is `fileSize` bytes long. */
export function verifyPostPolicy(input: PostFormInput & { fileSize: number }): AuthorizedPost {
  const authorized = checkPostForm(input);
  checkFileSize(input.fileSize, authorized.sizeRange);
  return authorized;
}

function userMetadata(fields: ReadonlyMap<string, string>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of fields) {
    if (name.startsWith('x-amz-meta-')) metadata[name.slice('x-amz-meta-'.length)] = value;
  }
  return metadata;
}

/** S3 answers 204 unless 200 or 201 is asked for; any other value is ignored. */
function successStatus(value: string): 200 | 201 | 204 {
  if (value === '200') return 200;
  if (value === '201') return 201;
  return 204;
}
