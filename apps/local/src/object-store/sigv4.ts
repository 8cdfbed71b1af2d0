import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The parts of AWS Signature Version 4 that a POST policy needs: the date-scoped signing key and
 * the HMAC over the base64 policy (the policy text as posted is the string to sign, see AWS's
 * "Authenticating Requests: Browser-Based Uploads Using POST (AWS Signature Version 4)").
 */
export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const dateKey = hmac(`AWS4${secret}`, date);
  return hmac(hmac(hmac(dateKey, region), service), 'aws4_request');
}

/** Hex signature of a base64 POST policy, exactly as S3 recomputes it (`date` is yyyymmdd). */
export function signPolicy(policyBase64: string, secret: string, date: string, region: string, service = 's3'): string {
  return createHmac('sha256', signingKey(secret, date, region, service))
    .update(policyBase64, 'utf8')
    .digest('hex');
}

/** Constant-time comparison of two hex signatures (case-insensitive, as hex is). */
export function signaturesEqual(expected: string, given: string): boolean {
  const a = Buffer.from(expected.toLowerCase(), 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface CredentialScope {
  accessKeyId: string;
  /** yyyymmdd */
  date: string;
  region: string;
  service: string;
}

/** `<access key>/<yyyymmdd>/<region>/<service>/aws4_request`, or undefined when malformed. */
export function parseCredential(value: string): CredentialScope | undefined {
  const parts = value.split('/');
  if (parts.length !== 5) return undefined;
  const [accessKeyId, date, region, service, terminator] = parts;
  if (!accessKeyId || !date || !region || !service || terminator !== 'aws4_request') return undefined;
  if (!/^\d{8}$/.test(date) || parseAmzDate(`${date}T000000Z`) === undefined) return undefined;
  return { accessKeyId, date, region, service };
}

/** `yyyymmddThhmmssZ` (x-amz-date) as Unix seconds, or undefined when it is not a real instant. */
export function parseAmzDate(value: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const part = (index: number) => Number(match[index]);
  const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(ms);
  // Date.UTC rolls 20151232 over into January: refuse instead of guessing.
  if (back.getUTCDate() !== day || back.getUTCMonth() !== month - 1 || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  return ms / 1000;
}
