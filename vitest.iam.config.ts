import { defineConfig } from 'vitest/config';

/**
 * The IAM conformance check, run after the test suite has recorded its AWS calls
 * (test/iam/recorder.ts): `pnpm test` runs it second.
 */
export default defineConfig({
  test: {
    include: ['test/iam/*.check.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
