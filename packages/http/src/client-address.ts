import { timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { ForbiddenError } from '@svc/core';

/**
 * Who is calling, as far as the per-address limits are concerned.
 *
 * Without an edge (local, dev) the caller is API Gateway's `requestContext.http.sourceIp`. On a
 * stage with CloudFront in front (staging, prod), that address is a CloudFront edge server's, the
 * same for thousands of callers: keyed by it, one caller would lock everyone out. There the
 * function is given `SVC_EDGE_ORIGIN_SECRET`, CloudFront adds it to every origin request as
 * `x-svc-origin-verify`, and the viewer's address comes from `CloudFront-Viewer-Address`. A
 * request without the secret went around the edge (and around its WAF): refused with 403.
 */
export const ORIGIN_VERIFY_HEADER = 'x-svc-origin-verify';
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

/** The caller's address, or a 403 for a request that bypassed the edge. */
export function clientAddress(
  headers: Readonly<Record<string, string | undefined>>,
  sourceIp: string,
  originSecret: string | undefined = process.env.SVC_EDGE_ORIGIN_SECRET,
): string {
  if (!originSecret) return sourceIp;
  if (!sameSecret(headers[ORIGIN_VERIFY_HEADER], originSecret)) {
    throw new ForbiddenError('Requests reach this API only through its public address');
  }
  // CloudFront sets the header itself (the origin request policy forwards it), overwriting
  // whatever a viewer sent; one we cannot read falls back to a single shared key, never to
  // the edge server's address.
  return viewerAddress(headers[VIEWER_ADDRESS_HEADER]) ?? 'unreadable-viewer-address';
}

/** Constant-time comparison: how long it takes says nothing about how much of the secret matched. */
function sameSecret(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `CloudFront-Viewer-Address` is the viewer's IP address and source port joined by a colon,
 * `198.51.100.10:46532`, an IPv6 address unbracketed, `2001:db8::1:46532` (CloudFront Developer
 * Guide, "Add CloudFront request headers", headers for determining the viewer's location:
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/adding-cloudfront-headers.html).
 * So the port is after the LAST colon; a bracketed form is read too, in case.
 */
export function viewerAddress(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || !/^\d{1,5}$/.test(value.slice(colon + 1))) return undefined;
  let ip = value.slice(0, colon);
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  return isIPv4(ip) || isIPv6(ip) ? ip : undefined;
}

/**
 * The key an address is limited under. IPv4: the address. IPv6: its /64 prefix, the smallest
 * block a provider hands one subscriber (RFC 6177), so one host cannot step around its limit by
 * walking its interface identifier. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is the IPv4
 * address it maps. Anything else is keyed as given, lower-cased.
 */
export function addressKey(address: string): string {
  const ip = address.trim().toLowerCase();
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip;
  const groups = ipv6Groups(ip);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail read). */
function ipv6Groups(ip: string): number[] {
  const withoutZone = ip.split('%')[0] ?? ip;
  let text = withoutZone;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => 0);
  return [...left, ...zeros, ...right];
}
