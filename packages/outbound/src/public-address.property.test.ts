import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from './public-address';

/**
 * Property tests against a deliberately plain reference: the IPv4 list written out again here and
 * matched with division instead of bit shifts, so a slip in either the list or the arithmetic of
 * the implementation shows up as a disagreement.
 */

const REFERENCE_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
  ['255.255.255.255', 32],
];

function toInteger(dotted: string): number {
  return dotted.split('.').reduce((total, octet) => total * 256 + Number(octet), 0);
}

function toDotted(value: number): string {
  const octets: number[] = [];
  let rest = value;
  for (let index = 0; index < 4; index++) {
    octets.unshift(rest % 256);
    rest = Math.floor(rest / 256);
  }
  return octets.join('.');
}

function toHexGroups(value: number): string {
  return `${Math.floor(value / 65536).toString(16)}:${(value % 65536).toString(16)}`;
}

function referenceIsPublic(value: number): boolean {
  return !REFERENCE_NON_PUBLIC.some(([base, prefix]) => {
    const size = 2 ** (32 - prefix);
    return Math.floor(value / size) === Math.floor(toInteger(base) / size);
  });
}

/** Uniform 32-bit values rarely land in a /24, so half the samples sit on or next to a range's edges. */
const ipv4Value = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc
    .tuple(fc.constantFrom(...REFERENCE_NON_PUBLIC), fc.integer({ min: -2, max: 2 }), fc.boolean())
    .map(([[base, prefix], offset, atEnd]) => {
      const start = toInteger(base) + (atEnd ? 2 ** (32 - prefix) - 1 : 0);
      return Math.min(0xffffffff, Math.max(0, start + offset));
    }),
);

describe('isPublicAddress, IPv4 property', () => {
  it('agrees with the reference CIDR list, in dotted form and in every IPv6 embedding', () => {
    fc.assert(
      fc.property(ipv4Value, (value) => {
        const dotted = toDotted(value);
        const expected = referenceIsPublic(value);
        expect(isPublicAddress(dotted)).toBe(expected);
        expect(isPublicAddress(`::ffff:${dotted}`)).toBe(expected);
        expect(isPublicAddress(`::ffff:${toHexGroups(value)}`)).toBe(expected);
        expect(isPublicAddress(`64:ff9b::${dotted}`)).toBe(expected);
        expect(isPublicAddress(`2002:${toHexGroups(value)}::`)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});

/** Prefixes worth landing in, so random addresses hit special ranges as well as plain global unicast. */
const IPV6_PREFIXES = [0x0000, 0x0064, 0x0100, 0x2001, 0x2002, 0x2606, 0x3fff, 0xfc00, 0xfd00, 0xfe80, 0xfec0, 0xff02];

const ipv6Groups = fc.tuple(
  fc.oneof(fc.constantFrom(...IPV6_PREFIXES), fc.integer({ min: 0, max: 0xffff })),
  fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 7, maxLength: 7 }),
);

describe('isPublicAddress, IPv6 spellings', () => {
  it('gives the same answer for the full, compressed, upper-case and bracketed forms', () => {
    fc.assert(
      fc.property(ipv6Groups, ([first, rest]) => {
        const full = [first, ...rest].map((group) => group.toString(16).padStart(4, '0')).join(':');
        const compressed = new URL(`https://[${full}]/`).hostname;
        const expected = isPublicAddress(full);
        expect(isPublicAddress(compressed)).toBe(expected);
        expect(isPublicAddress(compressed.slice(1, -1))).toBe(expected);
        expect(isPublicAddress(full.toUpperCase())).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses everything inside the non-embedding IPv6 ranges', () => {
    const blocks: readonly (readonly [number, number, number])[] = [
      // [first group, mask over the first group, second group or -1 for any]
      [0xfc00, 0xfe00, -1],
      [0xfe80, 0xffc0, -1],
      [0xfec0, 0xffc0, -1],
      [0xff00, 0xff00, -1],
      [0x2001, 0xffff, 0x0db8],
      [0x2001, 0xffff, 0x0000],
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...blocks),
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
        ([first, mask, second], random) => {
          const groups = random.map((group, index) => {
            if (index === 0) return (first & mask) | (group & ~mask & 0xffff);
            return index === 1 && second >= 0 ? second : group;
          });
          expect(isPublicAddress(groups.map((group) => group.toString(16)).join(':'))).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
