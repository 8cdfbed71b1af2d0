/**
 * S3's error model: an error code, an HTTP status and a message, plus the extra elements S3 adds
 * to its `<Error>` document (`Key`, `BucketName`, `MaxSizeAllowed`, …). Every refusal of the local
 * object store is one of these, so the AWS SDK and browsers see what S3 would send.
 */
export class S3Error extends Error {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    readonly details: Readonly<Record<string, string | number>> = {},
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

export function noSuchBucket(bucket: string): S3Error {
  return new S3Error('NoSuchBucket', 404, 'The specified bucket does not exist', { BucketName: bucket });
}

export function noSuchKey(key: string): S3Error {
  return new S3Error('NoSuchKey', 404, 'The specified key does not exist.', { Key: key });
}

export function notImplemented(what: string): S3Error {
  return new S3Error('NotImplemented', 501, `The local object store does not implement ${what}.`);
}

/** A refusal by the POST policy: S3 answers all of them with 403 AccessDenied and this prefix. */
export function policyDenied(reason: string): S3Error {
  return new S3Error('AccessDenied', 403, `Invalid according to Policy: ${reason}`);
}

export function invalidPolicy(reason: string): S3Error {
  return new S3Error('InvalidPolicyDocument', 400, `Invalid Policy: ${reason}`);
}

export function invalidArgument(name: string, value: string, message: string): S3Error {
  return new S3Error('InvalidArgument', 400, message, { ArgumentName: name, ArgumentValue: value });
}

export function missingPostField(name: string): S3Error {
  return invalidArgument(
    name,
    '',
    `Bucket POST must contain a field named '${name}'.  If it is specified, please check the order of the fields.`,
  );
}

export function entityTooLarge(size: number, max: number): S3Error {
  return new S3Error('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed size', {
    ProposedSize: size,
    MaxSizeAllowed: max,
  });
}

export function entityTooSmall(size: number, min: number): S3Error {
  return new S3Error('EntityTooSmall', 400, 'Your proposed upload is smaller than the minimum allowed size', {
    ProposedSize: size,
    MinSizeAllowed: min,
  });
}

export function signatureDoesNotMatch(stringToSign: string): S3Error {
  return new S3Error(
    'SignatureDoesNotMatch',
    403,
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    { StringToSign: stringToSign },
  );
}

export function malformedPost(): S3Error {
  return new S3Error(
    'MalformedPOSTRequest',
    400,
    'The body of your POST request is not well-formed multipart/form-data.',
  );
}

export function incompleteBody(): S3Error {
  return new S3Error(
    'IncompleteBody',
    400,
    'You did not provide the number of bytes specified by the Content-Length HTTP header',
  );
}
