import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conditionHolds, describeCondition, lengthRange, uncoveredFields } from './policy-conditions';
import { decodePolicy } from './policy-document';
import { verifyPostPolicy } from './post-policy';
import { S3Error } from './s3-error';
import { signPolicy } from './sigv4';

const subject = (values: Record<string, string>, size = 0) => ({ field: (name: string) => values[name] ?? '', size });
const anyText = fc.string({ unit: 'binary', maxLength: 24 });
const plainField = fc.constantFrom('key', 'x-amz-meta-tag', 'success_action_status', 'acl');

describe('POST policy conditions', () => {
  it('starts-with accepts exactly the values that start with the prefix', () => {
    const prefixAndValue = fc.oneof(
      fc.tuple(anyText, anyText),
      fc.tuple(anyText, anyText).map(([prefix, rest]) => [prefix, prefix + rest] as const),
    );
    fc.assert(
      fc.property(plainField, prefixAndValue, (field, [prefix, value]) => {
        const holds = conditionHolds({ kind: 'starts-with', field, prefix }, subject({ [field]: value }));
        expect(holds).toBe(value.startsWith(prefix));
      }),
    );
  });

  it('starts-with with an empty prefix accepts any value, even a missing field', () => {
    fc.assert(
      fc.property(plainField, fc.option(anyText, { nil: undefined }), (field, value) => {
        const values = value === undefined ? {} : { [field]: value };
        expect(conditionHolds({ kind: 'starts-with', field, prefix: '' }, subject(values))).toBe(true);
      }),
    );
  });

  it('content-length-range accepts exactly the sizes within its bounds', () => {
    const bound = fc.nat({ max: 10_000 });
    fc.assert(
      fc.property(bound, bound, bound, (min, max, size) => {
        const holds = conditionHolds({ kind: 'content-length-range', min, max }, subject({}, size));
        expect(holds).toBe(size >= min && size <= max);
      }),
    );
  });

  it('a signed policy accepts exactly the keys under its prefix and the sizes in its range', () => {
    const now = Date.parse('2030-01-01T00:00:00Z') / 1000;
    fc.assert(
      fc.property(anyText, anyText, fc.nat(64), fc.nat(64), fc.nat(64), (prefix, key, min, max, size) => {
        const policy = Buffer.from(
          JSON.stringify({
            expiration: '2030-01-01T00:15:00.000Z',
            conditions: [
              { bucket: 'uploads' },
              ['starts-with', '$key', prefix],
              ['content-length-range', min, max],
              { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' },
              { 'x-amz-credential': 'local/20300101/eu-central-2/s3/aws4_request' },
              { 'x-amz-date': '20300101T000000Z' },
            ],
          }),
        ).toString('base64');
        const fields = new Map([
          ['key', key],
          ['policy', policy],
          ['x-amz-algorithm', 'AWS4-HMAC-SHA256'],
          ['x-amz-credential', 'local/20300101/eu-central-2/s3/aws4_request'],
          ['x-amz-date', '20300101T000000Z'],
          ['x-amz-signature', signPolicy(policy, 'local', '20300101', 'eu-central-2', 's3')],
        ]);
        let accepted = true;
        try {
          verifyPostPolicy({ fields, bucket: 'uploads', fileSize: size, credentials: { local: 'local' }, now });
        } catch (error) {
          if (!(error instanceof S3Error)) throw error;
          accepted = false;
        }
        expect(accepted).toBe(key.length > 0 && key.startsWith(prefix) && size >= min && size <= max);
      }),
    );
  });

  it('treats a comma-separated Content-Type as a list whose every item must match', () => {
    const condition = { kind: 'starts-with', field: 'content-type', prefix: 'text/' } as const;
    expect(conditionHolds(condition, subject({ 'content-type': 'text/csv,text/plain' }))).toBe(true);
    expect(conditionHolds(condition, subject({ 'content-type': 'text/csv,application/xml' }))).toBe(false);
  });

  it('compares exact matches case-sensitively and a missing field as empty', () => {
    expect(conditionHolds({ kind: 'eq', field: 'acl', value: 'private' }, subject({ acl: 'Private' }))).toBe(false);
    expect(conditionHolds({ kind: 'eq', field: 'acl', value: '' }, subject({}))).toBe(true);
  });

  it('lists the fields no condition covers, except the exempt ones', () => {
    const conditions = decodePolicy(
      Buffer.from(JSON.stringify({ expiration: '2030-01-01T00:00:00Z', conditions: [['eq', '$Key', 'a']] })).toString(
        'base64',
      ),
    ).conditions;
    expect(uncoveredFields(['key', 'policy', 'x-amz-signature', 'x-ignore-me', 'acl', 'file'], conditions)).toEqual([
      'acl',
    ]);
    expect(describeCondition(conditions[0] ?? { kind: 'eq', field: '', value: '' })).toBe('["eq", "$key", "a"]');
  });

  it('combines several content-length-range conditions into their intersection', () => {
    expect(
      lengthRange([
        { kind: 'content-length-range', min: 1, max: 100 },
        { kind: 'content-length-range', min: 10, max: 1000 },
      ]),
    ).toEqual({ min: 10, max: 100 });
    expect(lengthRange([])).toBeUndefined();
  });
});

describe('POST policy documents', () => {
  const encode = (value: unknown) =>
    Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');
  const codeOf = (policy: string) => {
    try {
      decodePolicy(policy);
      return 'accepted';
    } catch (error) {
      return error instanceof S3Error ? `${error.statusCode} ${error.code}` : 'crashed';
    }
  };

  it.each([
    ['not base64', '%%%'],
    ['not JSON', encode('{"expiration": ')],
    ['no expiration', encode({ conditions: [] })],
    ['a non-ISO expiration', encode({ expiration: 'Dec 30 2015', conditions: [] })],
    ['no conditions', encode({ expiration: '2030-01-01T00:00:00Z' })],
    ['an unknown operator', encode({ expiration: '2030-01-01T00:00:00Z', conditions: [['matches', '$key', 'a']] })],
    ['a field without $', encode({ expiration: '2030-01-01T00:00:00Z', conditions: [['eq', 'key', 'a']] })],
    [
      'a non-numeric range',
      encode({ expiration: '2030-01-01T00:00:00Z', conditions: [['content-length-range', 'a', 2]] }),
    ],
    ['a non-string value', encode({ expiration: '2030-01-01T00:00:00Z', conditions: [{ acl: 1 }] })],
  ])('refuses a policy with %s as 400 InvalidPolicyDocument', (_, policy) => {
    expect(codeOf(policy)).toBe('400 InvalidPolicyDocument');
  });

  it("accepts S3's \\$ escape for a literal dollar", () => {
    const policy = encode('{"expiration": "2030-01-01T00:00:00Z", "conditions": [["eq", "$key", "\\$5"]]}');
    expect(decodePolicy(policy).conditions).toEqual([{ kind: 'eq', field: 'key', value: '$5' }]);
  });
});
