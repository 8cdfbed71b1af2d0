import type { ProviderHealth } from '@svc/payments';

/** One line per provider and mode: its circuit, as `pnpm ops providers:status` prints it. */
export function providerStatusLines(health: readonly ProviderHealth[], at = Math.floor(Date.now() / 1000)): string[] {
  return health.map((h) => {
    const parts = [`${h.provider.padEnd(10)} ${h.mode.padEnd(4)} ${h.state}`];
    if (h.failures > 0) parts.push(`${h.failures} failure(s) in the window`);
    if (h.state !== 'closed' && h.opened_at !== undefined) parts.push(`opened ${at - h.opened_at} s ago`);
    if (h.last_failure) parts.push(`last failure: ${h.last_failure}`);
    return parts.join(', ');
  });
}
