import { describe, expect, it } from 'vitest';
import { verifyPostPolicy } from './post-policy';
import { S3Error } from './s3-error';
import { parseAmzDate, parseCredential, signingKey, signPolicy } from './sigv4';

/**
 * AWS's published vector: "Example: Browser-Based Upload using HTTP POST (Using AWS Signature
 * Version 4)" in the Amazon S3 API reference. The base64 policy is copied verbatim from that page;
 * it encodes the policy text with CRLF line breaks, so it must not be re-serialised.
 */
const AWS_ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const AWS_POLICY =
  'eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9';
const AWS_SIGNATURE = '8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e';

/** The form of the same AWS example (field names in the example's own spelling). */
function awsExampleForm(overrides: Record<string, string> = {}): Map<string, string> {
  const fields: Record<string, string> = {
    key: ['user/user1/$', '{filename}'].join(''),
    acl: 'public-read',
    success_action_redirect: 'http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html',
    'Content-Type': 'image/jpeg',
    'x-amz-meta-uuid': '14365123651274',
    'x-amz-server-side-encryption': 'AES256',
    'X-Amz-Credential': `${AWS_ACCESS_KEY}/20151229/us-east-1/s3/aws4_request`,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Date': '20151229T000000Z',
    'x-amz-meta-tag': '',
    Policy: AWS_POLICY,
    'X-Amz-Signature': AWS_SIGNATURE,
    ...overrides,
  };
  return new Map(Object.entries(fields).map(([name, value]) => [name.toLowerCase(), value]));
}

const at = (iso: string) => Date.parse(iso) / 1000;

function verifyExample(fields: Map<string, string>, now: number) {
  return verifyPostPolicy({
    fields,
    bucket: 'sigv4examplebucket',
    filename: 'photo.jpg',
    fileSize: 1234,
    credentials: { [AWS_ACCESS_KEY]: AWS_SECRET },
    now,
    region: 'us-east-1',
  });
}

function refusal(action: () => unknown): { code: string; status: number; message: string } {
  try {
    action();
  } catch (error) {
    if (error instanceof S3Error) return { code: error.code, status: error.statusCode, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('SigV4 POST policy signing', () => {
  it("reproduces the signature of AWS's published browser-upload example", () => {
    expect(signPolicy(AWS_POLICY, AWS_SECRET, '20151229', 'us-east-1', 's3')).toBe(AWS_SIGNATURE);
  });

  it('signs the posted base64 text, so the CRLF policy re-serialised does not verify', () => {
    const text = Buffer.from(AWS_POLICY, 'base64').toString('utf8');
    expect(text).toContain('\r\n');
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(text))).toString('base64');
    expect(signPolicy(reserialised, AWS_SECRET, '20151229', 'us-east-1', 's3')).not.toBe(AWS_SIGNATURE);
  });

  it('derives a different key for another date, region or service', () => {
    const key = signingKey(AWS_SECRET, '20151229', 'us-east-1', 's3').toString('hex');
    expect(signingKey(AWS_SECRET, '20151230', 'us-east-1', 's3').toString('hex')).not.toBe(key);
    expect(signingKey(AWS_SECRET, '20151229', 'eu-central-2', 's3').toString('hex')).not.toBe(key);
    expect(signingKey(AWS_SECRET, '20151229', 'us-east-1', 'iam').toString('hex')).not.toBe(key);
  });

  it('accepts the published example form within its validity', () => {
    const authorized = verifyExample(awsExampleForm(), at('2015-12-29T10:00:00Z'));
    expect(authorized.key).toBe('user/user1/photo.jpg');
    expect(authorized.contentType).toBe('image/jpeg');
    expect(authorized.metadata).toEqual({ uuid: '14365123651274', tag: '' });
  });

  it('refuses the published example once it has expired', () => {
    expect(refusal(() => verifyExample(awsExampleForm(), at('2015-12-30T12:00:00Z')))).toEqual({
      code: 'AccessDenied',
      status: 403,
      message: 'Invalid according to Policy: Policy expired.',
    });
  });

  it('refuses the published example before its x-amz-date', () => {
    expect(refusal(() => verifyExample(awsExampleForm(), at('2015-12-28T23:59:59Z'))).code).toBe('AccessDenied');
  });

  it('refuses the published example with a Content-Type outside image/', () => {
    const form = awsExampleForm({ 'Content-Type': 'image/png,text/html' });
    expect(refusal(() => verifyExample(form, at('2015-12-29T10:00:00Z'))).message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["starts-with", "$content-type", "image/"]',
    );
  });

  it('refuses the published example signed for another region than the bucket', () => {
    const form = awsExampleForm();
    expect(
      refusal(() =>
        verifyPostPolicy({
          fields: form,
          bucket: 'sigv4examplebucket',
          fileSize: 1,
          credentials: { [AWS_ACCESS_KEY]: AWS_SECRET },
          now: at('2015-12-29T10:00:00Z'),
          region: 'eu-central-2',
        }),
      ).code,
    ).toBe('InvalidArgument');
  });

  it('parses credential scopes and x-amz-date strictly', () => {
    expect(parseCredential(`${AWS_ACCESS_KEY}/20151229/us-east-1/s3/aws4_request`)).toEqual({
      accessKeyId: AWS_ACCESS_KEY,
      date: '20151229',
      region: 'us-east-1',
      service: 's3',
    });
    expect(parseCredential(`${AWS_ACCESS_KEY}/20151229/us-east-1/s3`)).toBeUndefined();
    expect(parseCredential(`${AWS_ACCESS_KEY}/20151329/us-east-1/s3/aws4_request`)).toBeUndefined();
    expect(parseAmzDate('20151229T000000Z')).toBe(at('2015-12-29T00:00:00Z'));
    expect(parseAmzDate('20151232T000000Z')).toBeUndefined();
    expect(parseAmzDate('2015-12-29T00:00:00Z')).toBeUndefined();
  });
});
