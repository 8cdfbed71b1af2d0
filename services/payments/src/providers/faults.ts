/**
 * Faults the local runtime injects in front of a provider (`POST /_local/providers/{name}/fault`),
 * so tests and demos can show fail-over without an outage: `refuse` (the connection is refused:
 * nothing is sent), `timeout` and `error` (the call's answer never comes: an unknown outcome, as
 * after a timeout or a 5xx; the provider is not called, so nothing is charged). Only the local
 * runtime sets them; a deployed stage has no way to.
 */
export const PROVIDER_FAULTS = ['timeout', 'error', 'refuse'] as const;
export type ProviderFault = (typeof PROVIDER_FAULTS)[number];

const faults = new Map<string, ProviderFault>();

export function setProviderFault(provider: string, fault: ProviderFault | null): void {
  if (fault === null) faults.delete(provider);
  else faults.set(provider, fault);
}

export function providerFault(provider: string): ProviderFault | undefined {
  return faults.get(provider);
}
