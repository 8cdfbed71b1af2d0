import { isIP } from 'node:net';
import type { LookupFn } from '../lookup';

/** A resolver over a fixed table that records every name it was asked about, so tests need no DNS. */
export interface FakeLookup {
  lookup: LookupFn;
  calls: string[];
}

/**
 * Answers from `table` (name → addresses, or a function of the call number for rebinding tests);
 * unknown names fail with ENOTFOUND like getaddrinfo.
 */
export function fakeLookup(
  table: Record<string, readonly string[] | ((call: number) => readonly string[])>,
): FakeLookup {
  const calls: string[] = [];
  const lookup: LookupFn = (hostname, _options, callback) => {
    calls.push(hostname);
    const entry = table[hostname];
    const addresses = typeof entry === 'function' ? entry(calls.length) : entry;
    setImmediate(() => {
      if (addresses === undefined) callback(notFound(hostname), []);
      else
        callback(
          null,
          addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 })),
        );
    });
  };
  return { lookup, calls };
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}
