import { isLoopbackIPv4, isPublicIPv4, parseIPv4 } from './ipv4';
import { type Cidr6, cidr6, containsIPv6, ipv4At, parseIPv6 } from './ipv6';

/**
 * The SSRF guard's notion of "public": an address a customer's webhook receiver could
 * legitimately have on the internet. Everything else (private, loopback, link-local, metadata,
 * documentation, multicast, reserved, unparseable) is refused in deployed stages.
 */

type ParsedAddress = { family: 4; value: number } | { family: 6; value: bigint; zone: boolean };

/**
 * IPv6 forms that carry an IPv4 address the packet really goes to (the kernel, a NAT64 gateway
 * or a 6to4 relay unwraps it), so they are exactly as public as the embedded address.
 */
const EMBEDDED_IPV4: readonly { block: Cidr6; offset: number }[] = [
  { block: cidr6('::ffff:0:0/96'), offset: 96 }, // IPv4-mapped
  { block: cidr6('::/96'), offset: 96 }, // IPv4-compatible (deprecated); also covers :: and ::1
  { block: cidr6('64:ff9b::/96'), offset: 96 }, // NAT64 well-known prefix
  { block: cidr6('2002::/16'), offset: 16 }, // 6to4
];

/**
 * The only IPv6 space allocated for global unicast; anything outside it that is not an
 * embedded-IPv4 form above is refused, so a future special-purpose block does not slip through.
 */
const GLOBAL_UNICAST = cidr6('2000::/3');

/** Not publicly routable (IANA IPv6 special-purpose registry); some lie outside 2000::/3 and are listed for the record. */
export const NON_PUBLIC_IPV6: readonly Cidr6[] = [
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
].map(cidr6);

const LOOPBACK_IPV6 = cidr6('::1/128');
const MAPPED_IPV4 = cidr6('::ffff:0:0/96');

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
  if (containsIPv6(MAPPED_IPV4, address.value)) return isLoopbackIPv4(ipv4At(address.value, 96));
  return containsIPv6(LOOPBACK_IPV6, address.value);
}

function isPublicIPv6(value: bigint): boolean {
  const embedded = EMBEDDED_IPV4.find(({ block }) => containsIPv6(block, value));
  if (embedded !== undefined) return isPublicIPv4(ipv4At(value, embedded.offset));
  if (!containsIPv6(GLOBAL_UNICAST, value)) return false;
  return !NON_PUBLIC_IPV6.some((block) => containsIPv6(block, value));
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
