import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

export type { LookupAddress } from 'node:dns';

/** The shape of `dns.lookup` called with `{ all: true }`; tests inject one so no test needs real DNS. */
export type LookupFn = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** getaddrinfo, like Node's own connections: it honours /etc/hosts and the system's address ordering. */
export const systemLookup: LookupFn = dnsLookup;

/** Every address of `hostname`, as the resolver orders them. */
export function lookupAll(lookup: LookupFn, hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: true }, (error, addresses) => {
      if (error) reject(error);
      else if (!Array.isArray(addresses)) reject(new Error(`Lookup of ${hostname} returned no address list`));
      else resolve(addresses);
    });
  });
}

/**
 * A `lookup` for the request that answers every question with the one address already checked,
 * so the socket cannot be pointed elsewhere by a second DNS answer (rebinding). It honours
 * `all: true` because Node's happy-eyeballs connect (autoSelectFamily, on by default) asks for
 * a list, and answers on the next tick like the real resolver.
 */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    process.nextTick(() => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}
