import { isLoopbackIPv4, isPublicIPv4, parseIPv4 } from './ipv4';
import { type Cidr6, cidr6, containsIPv6, ipv4At, parseIPv6 } from './ipv6';

/**
 * The SSRF guard's notion of "public": an address a customer's webhook receiver could
 * legitimately have on the internet. Everything else (private, loopback, link-local, metadata,
 * documentation, multicast, reserved, unparseable) is refused in deployed stages.
 */

type ParsedAddress = { family: 4; value: number } | { family: 6; value: bigint; zone: boolean };

/**
 * The IPv6 blocks the guard judges by, parsed at the first check rather than at module load (the
 * first IPv6 parse compiles Node's address grammar: about 6 ms of every cold start otherwise, for
 * functions that mostly never check an address).
 */
interface Ipv6Blocks {
  /**
   * IPv6 forms that carry an IPv4 address the packet really goes to (the kernel, a NAT64 gateway
   * or a 6to4 relay unwraps it), so they are exactly as public as the embedded address.
   */
  embeddedIPv4: readonly { block: Cidr6; offset: number }[];
  /**
   * The only IPv6 space allocated for global unicast; anything outside it that is not an
   * embedded-IPv4 form above is refused, so a future special-purpose block does not slip through.
   */
  globalUnicast: Cidr6;
  /** Not publicly routable (IANA IPv6 special-purpose registry); some lie outside 2000::/3 and are listed for the record. */
  nonPublic: readonly Cidr6[];
  loopback: Cidr6;
  mappedIPv4: Cidr6;
}

let blocks: Ipv6Blocks | undefined;

function ipv6Blocks(): Ipv6Blocks {
  blocks ??= {
    embeddedIPv4: [
      { block: cidr6('::ffff:0:0/96'), offset: 96 }, // IPv4-mapped
      { block: cidr6('::/96'), offset: 96 }, // IPv4-compatible (deprecated); also covers :: and ::1
      { block: cidr6('64:ff9b::/96'), offset: 96 }, // NAT64 well-known prefix
      { block: cidr6('2002::/16'), offset: 16 }, // 6to4
    ],
    globalUnicast: cidr6('2000::/3'),
    nonPublic: NON_PUBLIC_IPV6_BLOCKS.map(cidr6),
    loopback: cidr6('::1/128'),
    mappedIPv4: cidr6('::ffff:0:0/96'),
  };
  return blocks;
}

/** Not publicly routable (IANA IPv6 special-purpose registry), as written. */
const NON_PUBLIC_IPV6_BLOCKS: readonly string[] = [
  '::/128', // unspecified
  '::1/128', // loopback
  '64:ff9b:1::/48', // local-use NAT64: the embedding depends on the operator's prefix length, so all of it
  '100::/64', // discard-only
  '2001::/32', // Teredo: tunnels to an obfuscated IPv4 address that cannot be checked
  '2001:2::/48', // benchmarking
  '2001:10::/28', // deprecated ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation (RFC 9637)
  'fc00::/7', // unique local, including AWS's fd00:ec2::254 metadata endpoint
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
];

/**
 * Whether `ip` is a public unicast address. Accepts dotted-quad IPv4 and IPv6 in any spelling
 * (compressed, upper case, embedded dotted quad, `[bracketed]` as in URLs). Anything unparseable
 * is not public: the guard fails closed. An IPv6 zone id (`fe80::1%eth0`) scopes the address to
 * an interface, which no public address needs, so a zoned address is never public either.
 */
export function isPublicAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (address === undefined) return false;
  if (address.family === 4) return isPublicIPv4(address.value);
  return !address.zone && isPublicIPv6(address.value);
}

/**
 * Whether `ip` is a loopback address (127/8, ::1, or 127/8 mapped into IPv6). Plain `http:` is
 * allowed only to these, for local receivers in tests and development.
 */
export function isLoopbackAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (address === undefined) return false;
  if (address.family === 4) return isLoopbackIPv4(address.value);
  const { mappedIPv4, loopback } = ipv6Blocks();
  if (containsIPv6(mappedIPv4, address.value)) return isLoopbackIPv4(ipv4At(address.value, 96));
  return containsIPv6(loopback, address.value);
}

function isPublicIPv6(value: bigint): boolean {
  const { embeddedIPv4, globalUnicast, nonPublic } = ipv6Blocks();
  const embedded = embeddedIPv4.find(({ block }) => containsIPv6(block, value));
  if (embedded !== undefined) return isPublicIPv4(ipv4At(value, embedded.offset));
  if (!containsIPv6(globalUnicast, value)) return false;
  return !nonPublic.some((block) => containsIPv6(block, value));
}

/** Either family, tolerating URL brackets and an IPv6 zone id. */
function parseAddress(text: string): ParsedAddress | undefined {
  const ipv4 = parseIPv4(text);
  if (ipv4 !== undefined) return { family: 4, value: ipv4 };
  const unbracketed = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zoneAt = unbracketed.indexOf('%');
  const zone = zoneAt >= 0;
  if (zone && zoneAt === unbracketed.length - 1) return undefined;
  const ipv6 = parseIPv6(zone ? unbracketed.slice(0, zoneAt) : unbracketed);
  return ipv6 === undefined ? undefined : { family: 6, value: ipv6, zone };
}

/**
 * Whether a URL's host is an IP literal that is not public. The WHATWG URL parser has already
 * turned decimal, octal and hexadecimal IPv4 spellings into dotted quads and bracketed IPv6 into
 * its canonical form, so this sees every spelling of an address. Host names are not judged here:
 * they are checked after DNS resolution, at delivery.
 */
export function isNonPublicLiteralHost(url: URL): boolean {
  const host = url.hostname;
  if (host.startsWith('[')) return !isPublicAddress(host);
  return parseIPv4(host) !== undefined && !isPublicAddress(host);
}
