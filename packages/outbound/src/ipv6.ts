import { isIPv6 } from 'node:net';
import { parseIPv4 } from './ipv4';

/**
 * IPv6 addresses as 128-bit bigints. Node validates the text (`net.isIPv6`) and a small expander
 * turns it into a number, so range checks are plain prefix comparisons instead of string games
 * that `::ffff:127.0.0.1`, `::FFFF:7F00:1` and `0:0:0:0:0:ffff:7f00:1` would each defeat.
 */

/** A CIDR block over 128-bit addresses. */
export interface Cidr6 {
  readonly base: bigint;
  readonly prefix: number;
}

const GROUP = /^[0-9a-f]{1,4}$/i;

/** The address as a 128-bit integer, or undefined if it is not plain IPv6 (zone ids are the caller's business). */
export function parseIPv6(text: string): bigint | undefined {
  if (text.includes('%') || !isIPv6(text)) return undefined;
  const groups = expandGroups(text);
  if (groups === undefined) return undefined;
  let value = 0n;
  for (const group of groups) {
    if (!GROUP.test(group)) return undefined;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

/** The eight hexadecimal groups, with `::` filled in and a trailing dotted quad turned into two groups. */
function expandGroups(text: string): string[] | undefined {
  const halves = withHexTail(text)?.split('::');
  if (halves === undefined || halves.length > 2) return undefined;
  const [head = '', tail] = halves;
  const headGroups = head === '' ? [] : head.split(':');
  if (tail === undefined) return headGroups.length === 8 ? headGroups : undefined;
  const tailGroups = tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  if (missing < 1) return undefined;
  return [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
}

/** Rewrites an embedded IPv4 tail (`::ffff:127.0.0.1`) as two hex groups (`::ffff:7f00:1`). */
function withHexTail(text: string): string | undefined {
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!tail.includes('.')) return text;
  const ipv4 = parseIPv4(tail);
  if (ipv4 === undefined) return undefined;
  const high = (ipv4 >>> 16).toString(16);
  const low = (ipv4 & 0xffff).toString(16);
  return `${text.slice(0, lastColon + 1)}${high}:${low}`;
}

/** Parses `x::/n`; throws on a malformed literal because the lists using it are code, not input. */
export function cidr6(text: string): Cidr6 {
  const [address, bits] = text.split('/');
  const base = address === undefined ? undefined : parseIPv6(address);
  const prefix = Number(bits);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 128) {
    throw new Error(`Invalid IPv6 CIDR: ${text}`);
  }
  return { base, prefix };
}

/** Whether the block contains the address. */
export function containsIPv6(block: Cidr6, value: bigint): boolean {
  const shift = BigInt(128 - block.prefix);
  return value >> shift === block.base >> shift;
}

/** The 32 bits starting `offset` bits from the most significant end. */
export function ipv4At(value: bigint, offset: number): number {
  return Number((value >> BigInt(128 - offset - 32)) & 0xffffffffn);
}
