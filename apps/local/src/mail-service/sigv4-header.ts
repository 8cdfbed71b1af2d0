import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseAmzDate, parseCredential, SIGV4_ALGORITHM, signaturesEqual, signingKey } from '../object-store/sigv4';

/**
 * A request signed with AWS Signature Version 4 in its Authorization header, checked as AWS does
 * ("Create a signed AWS API request", https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html):
 * the canonical request (method, URI, sorted query, the signed headers lower-cased with values
 * trimmed, the signed header names, the payload's SHA-256), the string to sign
 * (`AWS4-HMAC-SHA256`, x-amz-date, credential scope, hash of the canonical request) and its HMAC
 * with the date-scoped key (the object store's `signingKey`, the same derivation). The stand-ins'
 * AWS services answer what fails with their own error shapes; this says only why.
 */
export type SignatureProblem =
  | { kind: 'missing'; message: string }
  | { kind: 'unknown_key'; message: string }
  | { kind: 'mismatch'; message: string }
  | { kind: 'malformed'; message: string };

export interface SignedRequest {
  method: string;
  /** The path and query as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** SigV4's URI encoding: every byte but A–Z a–z 0–9 - _ . ~ percent-encoded (upper-case hex). */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(query: string): string {
  if (!query) return '';
  return query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
      return [uriEncode(name), uriEncode(value)] as const;
    })
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Undefined when the request is signed for `service` by a known key within 15 minutes of `now`:
 * AWS refuses a request whose x-amz-date is further than that from its own clock (the page above
 * names the 15 minutes; the words of AWS's refusal are not reproduced here).
 */
export function checkSignedRequest(
  request: SignedRequest,
  options: { service: string; credentials: Readonly<Record<string, string>>; now: number },
): SignatureProblem | undefined {
  const authorization = headerValue(request.headers, 'authorization');
  if (!authorization) return { kind: 'missing', message: 'Missing Authentication Token' };
  const match = /^(\S+) Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/i.exec(
    authorization.trim(),
  );
  if (!match || match[1] !== SIGV4_ALGORITHM) {
    return {
      kind: 'malformed',
      message: `Authorization header requires ${SIGV4_ALGORITHM} with Credential, SignedHeaders and Signature`,
    };
  }
  const [, , credentialText = '', signedHeaderText = '', signature = ''] = match;
  const credential = parseCredential(credentialText);
  if (!credential) return { kind: 'malformed', message: `Credential should be scoped correctly: ${credentialText}` };
  if (credential.service !== options.service) {
    return { kind: 'malformed', message: `Credential should be scoped to correct service: '${options.service}'.` };
  }
  const secret = options.credentials[credential.accessKeyId];
  if (secret === undefined)
    return { kind: 'unknown_key', message: 'The security token included in the request is invalid.' };
  const amzDate = headerValue(request.headers, 'x-amz-date') ?? '';
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined || !amzDate.startsWith(credential.date)) {
    return { kind: 'malformed', message: "The request must carry x-amz-date of the credential scope's day" };
  }
  if (Math.abs(options.now - signedAt) > 15 * 60) {
    return { kind: 'mismatch', message: `Signature expired: ${amzDate} is not within 15 minutes of the server's time` };
  }
  const signedHeaders = signedHeaderText.toLowerCase().split(';');
  if (!signedHeaders.includes('host')) return { kind: 'malformed', message: "'Host' must be a signed header" };
  const queryAt = request.url.indexOf('?');
  const path = queryAt < 0 ? request.url : request.url.slice(0, queryAt);
  const query = queryAt < 0 ? '' : request.url.slice(queryAt + 1);
  const payloadHash =
    headerValue(request.headers, 'x-amz-content-sha256') ?? createHash('sha256').update(request.body).digest('hex');
  const canonical = [
    request.method.toUpperCase(),
    // Services other than S3 encode the path as sent once more: each segment URI-encoded twice,
    // S3's once (same page, canonical URI). SendEmail's path has nothing to encode either way.
    path.split('/').map(uriEncode).join('/'),
    canonicalQuery(query),
    ...signedHeaders.map((name) => `${name}:${(headerValue(request.headers, name) ?? '').trim().replace(/\s+/g, ' ')}`),
    '',
    signedHeaders.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${credential.date}/${credential.region}/${credential.service}/aws4_request`;
  const stringToSign = [SIGV4_ALGORITHM, amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join(
    '\n',
  );
  const expected = createHmac('sha256', signingKey(secret, credential.date, credential.region, credential.service))
    .update(stringToSign)
    .digest('hex');
  if (!signaturesEqual(expected, signature)) {
    return {
      kind: 'mismatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    };
  }
  return undefined;
}
