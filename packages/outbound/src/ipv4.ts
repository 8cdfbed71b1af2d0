/**
 * IPv4 addresses as unsigned 32-bit integers, and the ranges a webhook must never reach.
 * Parsing is deliberately strict (four decimal octets, no leading zeros): odd spellings such as
 * `127.1` or `0x7f.0.0.1` are only meaningful inside URLs, where the WHATWG parser normalises
 * them before they get here; anywhere else they are rejected rather than guessed at.
 */

/** A CIDR block over 32-bit addresses. */
export interface Cidr4 {
  readonly base: number;
  readonly prefix: number;
}

const OCTET = /^(0|[1-9][0-9]{0,2})$/;

/** The address as an unsigned 32-bit integer, or undefined unless it is a strict dotted quad. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Dotted-quad form of an unsigned 32-bit integer. */
export function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

/** Parses `a.b.c.d/n`; throws on a malformed literal because the lists below are code, not input. */
export function cidr4(text: string): Cidr4 {
  const [address, bits] = text.split('/');
  const base = address === undefined ? undefined : parseIPv4(address);
  const prefix = Number(bits);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) {
    throw new Error(`Invalid IPv4 CIDR: ${text}`);
  }
  return { base, prefix };
}

/** Whether the block contains the address; `>>>` because JavaScript shifts are mod 32. */
export function containsIPv4(block: Cidr4, value: number): boolean {
  if (block.prefix === 0) return true;
  const shift = 32 - block.prefix;
  return value >>> shift === block.base >>> shift;
}

/**
 * Not publicly routable, or not a unicast host a webhook could legitimately live on
 * (IANA IPv4 special-purpose registry, plus multicast and the reserved class E).
 */
export const NON_PUBLIC_IPV4: readonly Cidr4[] = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT shared space
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, including the 169.254.169.254 instance metadata service
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1 documentation
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2 documentation
  '203.0.113.0/24', // TEST-NET-3 documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved (class E)
  '255.255.255.255/32', // limited broadcast (inside 240/4; listed so the intent is explicit)
].map(cidr4);

const LOOPBACK_IPV4 = cidr4('127.0.0.0/8');

/** Public unicast: outside every block of NON_PUBLIC_IPV4. */
export function isPublicIPv4(value: number): boolean {
  return !NON_PUBLIC_IPV4.some((block) => containsIPv4(block, value));
}

/** In 127.0.0.0/8. */
export function isLoopbackIPv4(value: number): boolean {
  return containsIPv4(LOOPBACK_IPV4, value);
}
