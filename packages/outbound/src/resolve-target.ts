import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { BlockedTargetError } from './blocked-target-error';
import { type LookupFn, lookupAll, systemLookup } from './lookup';
import { isLoopbackAddress, isPublicAddress } from './public-address';

/** A checked delivery target: connect to `address`, but speak TLS and HTTP to `hostname`. */
export interface ResolvedTarget {
  url: URL;
  /** The URL's host without IPv6 brackets: used for SNI, certificate checks and Host. */
  hostname: string;
  /** The address to connect to: the first one the resolver returned (all of them were checked). */
  address: string;
  family: 4 | 6;
}

export interface ResolveTargetOptions {
  /** Local stages only: skip the public-address check (and allow `http:` to loopback). */
  allowPrivate: boolean;
  lookup?: LookupFn;
}

/**
 * Validates a webhook URL and resolves its host, refusing it (BlockedTargetError) unless it is
 * `https:` without credentials on a valid port and EVERY resolved address is public: checking
 * only the first would let a name with one public and one private record pass here and still
 * reach the private one through a connect-time retry. Exception: with `allowPrivate`, plain
 * `http:` is allowed when every address is loopback, for local receivers in tests.
 * DNS failures are not blocks; they reject with the resolver's error (code ENOTFOUND etc.).
 */
export async function resolveTarget(url: string, options: ResolveTargetOptions): Promise<ResolvedTarget> {
  const parsed = parseTargetUrl(url);
  const hostname = unbracket(parsed.hostname);
  const addresses = await addressesOf(hostname, options.lookup ?? systemLookup);
  const first = addresses[0];
  if (first === undefined) throw new Error(`${hostname} resolved to no addresses`);
  if (!options.allowPrivate) refuseNonPublic(hostname, addresses);
  if (parsed.protocol === 'http:') refuseInsecure(hostname, addresses, options.allowPrivate);
  return { url: parsed, hostname, address: first.address, family: familyOf(first.address) };
}

/** The syntactic checks, before any lookup. */
function parseTargetUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedTargetError('The webhook URL is not a valid URL', 'invalid-url');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new BlockedTargetError(`Only https:// webhook URLs are allowed, not ${parsed.protocol}//`, 'scheme');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new BlockedTargetError('Webhook URLs must not contain credentials', 'credentials');
  }
  if (parsed.port === '0') throw new BlockedTargetError('The webhook URL has an invalid port (0)', 'port');
  if (parsed.hostname === '') throw new BlockedTargetError('The webhook URL has no host', 'invalid-url');
  return parsed;
}

/** An IP literal is its own (only) address; names go to the resolver. Every answer must be an IP. */
async function addressesOf(hostname: string, lookup: LookupFn): Promise<LookupAddress[]> {
  const literalFamily = isIP(hostname);
  if (literalFamily !== 0) return [{ address: hostname, family: literalFamily }];
  const addresses = await lookupAll(lookup, hostname);
  const invalid = addresses.find(({ address }) => isIP(address) === 0);
  if (invalid !== undefined) throw new Error(`${hostname} resolved to an invalid address: ${invalid.address}`);
  return addresses;
}

function refuseNonPublic(hostname: string, addresses: readonly LookupAddress[]): void {
  const refused = addresses.find(({ address }) => !isPublicAddress(address));
  if (refused === undefined) return;
  const where = refused.address === hostname ? refused.address : `${hostname} (${refused.address})`;
  throw new BlockedTargetError(`Refusing to deliver to ${where}: not a public address`, 'address', refused.address);
}

function refuseInsecure(hostname: string, addresses: readonly LookupAddress[], allowPrivate: boolean): void {
  if (allowPrivate && addresses.every(({ address }) => isLoopbackAddress(address))) return;
  throw new BlockedTargetError(
    `Only https:// webhook URLs are allowed (http:// only to loopback when private targets are allowed): ${hostname}`,
    'scheme',
  );
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** From the address itself rather than the resolver's claim, which an injected lookup could get wrong. */
function familyOf(address: string): 4 | 6 {
  return isIP(address) === 6 ? 6 : 4;
}
