import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isPublicAddress } from './public-address';

/** [address, public?] for each non-public IPv4 range: inside (edges and a middle) and just outside. */
const IPV4_CASES: readonly (readonly [string, boolean])[] = [
  // 0.0.0.0/8
  ['0.0.0.0', false],
  ['0.1.2.3', false],
  ['0.255.255.255', false],
  ['1.0.0.0', true],
  // 10.0.0.0/8
  ['9.255.255.255', true],
  ['10.0.0.0', false],
  ['10.1.2.3', false],
  ['10.255.255.255', false],
  ['11.0.0.0', true],
  // 100.64.0.0/10
  ['100.63.255.255', true],
  ['100.64.0.0', false],
  ['100.100.100.100', false],
  ['100.127.255.255', false],
  ['100.128.0.0', true],
  // 127.0.0.0/8
  ['126.255.255.255', true],
  ['127.0.0.0', false],
  ['127.0.0.1', false],
  ['127.255.255.255', false],
  ['128.0.0.0', true],
  // 169.254.0.0/16
  ['169.253.255.255', true],
  ['169.254.0.0', false],
  ['169.254.169.254', false],
  ['169.254.170.2', false],
  ['169.254.255.255', false],
  ['169.255.0.0', true],
  // 172.16.0.0/12
  ['172.15.255.255', true],
  ['172.16.0.0', false],
  ['172.20.1.1', false],
  ['172.31.255.255', false],
  ['172.32.0.0', true],
  // 192.0.0.0/24
  ['191.255.255.255', true],
  ['192.0.0.0', false],
  ['192.0.0.8', false],
  ['192.0.0.255', false],
  ['192.0.1.0', true],
  // 192.0.2.0/24
  ['192.0.1.255', true],
  ['192.0.2.0', false],
  ['192.0.2.1', false],
  ['192.0.2.255', false],
  ['192.0.3.0', true],
  // 192.88.99.0/24
  ['192.88.98.255', true],
  ['192.88.99.0', false],
  ['192.88.99.1', false],
  ['192.88.99.255', false],
  ['192.88.100.0', true],
  // 192.168.0.0/16
  ['192.167.255.255', true],
  ['192.168.0.0', false],
  ['192.168.1.1', false],
  ['192.168.255.255', false],
  ['192.169.0.0', true],
  // 198.18.0.0/15
  ['198.17.255.255', true],
  ['198.18.0.0', false],
  ['198.19.0.1', false],
  ['198.19.255.255', false],
  ['198.20.0.0', true],
  // 198.51.100.0/24
  ['198.51.99.255', true],
  ['198.51.100.0', false],
  ['198.51.100.7', false],
  ['198.51.100.255', false],
  ['198.51.101.0', true],
  // 203.0.113.0/24
  ['203.0.112.255', true],
  ['203.0.113.0', false],
  ['203.0.113.9', false],
  ['203.0.113.255', false],
  ['203.0.114.0', true],
  // 224.0.0.0/4, then 240.0.0.0/4 and the broadcast address up to the top
  ['223.255.255.255', true],
  ['224.0.0.0', false],
  ['224.0.0.251', false],
  ['239.255.255.255', false],
  ['240.0.0.0', false],
  ['250.1.2.3', false],
  ['255.255.255.254', false],
  ['255.255.255.255', false],
  // public
  ['8.8.8.8', true],
  ['1.1.1.1', true],
  ['52.94.236.248', true],
  ['100.63.0.1', true],
];

function hex(ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Every IPv6 spelling that carries an IPv4 address the packet really goes to. */
const EMBEDDINGS: readonly (readonly [string, (ipv4: string) => string])[] = [
  ['mapped, dotted', (ipv4) => `::ffff:${ipv4}`],
  ['mapped, hex', (ipv4) => `::ffff:${hex(ipv4)}`],
  ['mapped, upper case', (ipv4) => `::FFFF:${hex(ipv4).toUpperCase()}`],
  ['mapped, uncompressed', (ipv4) => `0:0:0:0:0:ffff:${hex(ipv4)}`],
  ['mapped, bracketed', (ipv4) => `[::ffff:${ipv4}]`],
  ['compatible, dotted', (ipv4) => `::${ipv4}`],
  ['compatible, hex', (ipv4) => `::${hex(ipv4)}`],
  ['NAT64, dotted', (ipv4) => `64:ff9b::${ipv4}`],
  ['NAT64, hex', (ipv4) => `64:ff9b::${hex(ipv4)}`],
  ['6to4', (ipv4) => `2002:${hex(ipv4)}::1`],
  ['6to4, full subnet and interface id', (ipv4) => `2002:${hex(ipv4)}:ffff:ffff:ffff:ffff:ffff`],
];

describe('isPublicAddress, IPv4', () => {
  it.each(IPV4_CASES)('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('isPublicAddress, IPv4 embedded in IPv6', () => {
  it.each(IPV4_CASES)('%s → %s in every embedding', (address, expected) => {
    const answers = Object.fromEntries(EMBEDDINGS.map(([name, embed]) => [name, isPublicAddress(embed(address))]));
    expect(answers).toEqual(Object.fromEntries(EMBEDDINGS.map(([name]) => [name, expected])));
  });
});

describe('isPublicAddress, IPv6', () => {
  it.each<readonly [string, boolean]>([
    ['::', false],
    ['::1', false],
    ['0:0:0:0:0:0:0:1', false],
    ['[::1]', false],
    // 64:ff9b:1::/48, local-use NAT64: refused whatever it embeds
    ['64:ff9b:1::', false],
    ['64:ff9b:1::808:808', false],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', false],
    ['64:ff9b:0:0:0:1::808:808', false], // outside the NAT64 /96: not global unicast
    // 100::/64, discard-only
    ['100::', false],
    ['100::ffff:ffff:ffff:ffff', false],
    ['100:0:0:1::', false], // just outside, but outside 2000::/3 too
    // 2001::/32, Teredo
    ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['2001::', false],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['2001:1::1', true],
    // 2001:2::/48, benchmarking
    ['2001:2::1', false],
    ['2001:2:1::', true],
    // 2001:db8::/32, documentation
    ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['2001:db8::', false],
    ['2001:DB8::1', false],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['2001:db9::', true],
    // 3fff::/20, documentation
    ['3fff::1', false],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['3fff:1000::', true],
    // fc00::/7, unique local
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false], // outside 2000::/3
    ['fc00::', false],
    ['fd00:ec2::254', false],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    // fe80::/10, link-local
    ['fe80::', false],
    ['fe80::1', false],
    ['FE80::1', false],
    ['fe80::1%eth0', false],
    ['[fe80::1%25eth0]', false],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    // fec0::/10, site-local
    ['fec0::', false],
    ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    // ff00::/8, multicast
    ['ff00::', false],
    ['ff02::1', false],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    // outside 2000::/3: nothing is allocated there for global unicast
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['4000::', false],
    ['5f00::1', false],
    ['::ffff:0:808:808', false], // IPv4-translated (SIIT) form: not decoded, so refused
    // public
    ['2606:4700:4700::1111', true],
    ['2606:4700:4700:0:0:0:0:1111', true],
    ['2606:4700:4700::1111'.toUpperCase(), true],
    ['[2606:4700:4700::1111]', true],
    ['2001:4860:4860::8888', true],
    ['2a00:1450:4001:81b::200e', true],
    ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('refuses a public address with a zone id: zones scope an address to an interface', () => {
    expect(isPublicAddress('2606:4700:4700::1111%eth0')).toBe(false);
  });
});

describe('isPublicAddress, not an address (fails closed)', () => {
  it.each([
    '',
    'localhost',
    'example.com',
    '127.1',
    '0x7f000001',
    '0x7f.0.0.1',
    '2130706433',
    '017700000001',
    '010.0.0.1',
    '08.8.8.8',
    '1.2.3.4.5',
    '256.1.1.1',
    ' 8.8.8.8',
    '8.8.8.8 ',
    '[8.8.8.8]',
    '::ffff:127.1',
    '::ffff:8.8.8.08',
    ':::1',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    'gggg::1',
    'fe80::1%',
    '[2606:4700:4700::1111',
    '2606:4700:4700::1111]',
  ])('%j → false', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });
});

describe('isLoopbackAddress', () => {
  it.each<readonly [string, boolean]>([
    ['127.0.0.1', true],
    ['127.255.255.255', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['::', false],
    ['::127.0.0.1', false],
    ['64:ff9b::127.0.0.1', false],
    ['8.8.8.8', false],
    ['localhost', false],
  ])('%s → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});
