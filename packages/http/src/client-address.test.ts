import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addressKey,
  clientAddress,
  ORIGIN_VERIFY_HEADER,
  VIEWER_ADDRESS_HEADER,
  viewerAddress,
} from './client-address';

/** Eight 16-bit groups as an IPv6 address, written fully or with its longest zero run as `::`. */
const groupsArb = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
const full = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');

describe('the per-address key', () => {
  it('is the /64 of an IPv6 address, however the address is written (property)', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const key = addressKey(ip);
        expect(key).toMatch(/^(?:[0-9a-f]{1,4}:){3}[0-9a-f]{1,4}::\/64$|^\d+\.\d+\.\d+\.\d+$/);
        expect(addressKey(ip.toUpperCase())).toBe(key);
      }),
    );
  });

  it('is shared by every address of one /64 and differs between /64s (property)', () => {
    fc.assert(
      fc.property(groupsArb, groupsArb, (a, b) => {
        fc.pre(!(a.slice(0, 5).every((g) => g === 0) && a[5] === 0xffff));
        const sameNet = [...a.slice(0, 4), ...b.slice(4)];
        expect(addressKey(full(sameNet))).toBe(addressKey(full(a)));
        const otherNet = [...b.slice(0, 4), ...a.slice(4)];
        const sameFirst = a.slice(0, 4).join() === b.slice(0, 4).join();
        expect(addressKey(full(otherNet)) === addressKey(full(a))).toBe(sameFirst);
      }),
    );
  });

  it('is the IPv4 address itself, also when mapped into IPv6 (property)', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(addressKey(ip)).toBe(ip);
        expect(addressKey(`::ffff:${ip}`)).toBe(ip);
      }),
    );
  });

  it('puts two hosts of one /64 together, whatever the compression', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb::9'));
    expect(addressKey('2001:0db8:0001:0002:0000:0000:0000:0001')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('::ffff:c000:0280')).toBe('192.0.2.128');
  });
});

describe('the caller address', () => {
  it("is API Gateway's source address without an edge", () => {
    expect(clientAddress({ [VIEWER_ADDRESS_HEADER]: '198.51.100.1:443' }, '203.0.113.9', undefined)).toBe(
      '203.0.113.9',
    );
  });

  it("is CloudFront's viewer address behind the edge, and a request without the secret is a 403", () => {
    const secret = 'edge-secret-0123456789';
    const headers = { [ORIGIN_VERIFY_HEADER]: secret, [VIEWER_ADDRESS_HEADER]: '198.51.100.10:46532' };
    expect(clientAddress(headers, '130.176.0.1', secret)).toBe('198.51.100.10');
    expect(clientAddress({ ...headers, [VIEWER_ADDRESS_HEADER]: '2001:db8:1:2::7:46532' }, '130.176.0.1', secret)).toBe(
      '2001:db8:1:2::7',
    );
    for (const given of [undefined, '', 'edge-secret-012345678', 'edge-secret-0123456789x', 'EDGE-SECRET-0123456789']) {
      const without = { ...headers, [ORIGIN_VERIFY_HEADER]: given };
      expect(() => clientAddress(without, '130.176.0.1', secret)).toThrow(
        expect.objectContaining({ statusCode: 403, code: 'forbidden' }),
      );
    }
    // A header CloudFront did not write readably: one shared key, never the edge server's address.
    expect(clientAddress({ ...headers, [VIEWER_ADDRESS_HEADER]: 'nonsense' }, '130.176.0.1', secret)).toBe(
      'unreadable-viewer-address',
    );
  });

  it('reads CloudFront-Viewer-Address as address and port, IPv6 unbracketed or bracketed (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.integer({ min: 0, max: 65535 }), (ip, port) => {
        expect(viewerAddress(`${ip}:${port}`)).toBe(ip);
        if (ip.includes(':')) expect(viewerAddress(`[${ip}]:${port}`)).toBe(ip);
      }),
    );
    expect(viewerAddress('198.51.100.10')).toBeUndefined();
    expect(viewerAddress('not-an-ip:80')).toBeUndefined();
    expect(viewerAddress(undefined)).toBeUndefined();
  });
});
