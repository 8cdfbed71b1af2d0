import { spawnSync } from 'node:child_process';

/**
 * `pnpm test`: the one gate. Without arguments, every check in order, stopping at the first that
 * fails: types, lint, the whole vitest suite, then the conformance checks that read what the
 * suite recorded (IAM calls, API answers). With paths (`pnpm test services/payments`), only the
 * tests under them: the quick loop on one domain (the conformance checks need the whole run).
 */
const paths = process.argv.slice(2);

const steps: Array<[string, string[]]> =
  paths.length > 0
    ? [['vitest', ['run', ...paths]]]
    : [
        ['tsc', ['-b']],
        ['biome', ['check', '.']],
        ['vitest', ['run']],
        ['vitest', ['run', '--config', 'vitest.conformance.config.ts']],
      ];

for (const [command, args] of steps) {
  const result = spawnSync('pnpm', ['exec', command, ...args], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
