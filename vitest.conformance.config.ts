import { defineConfig } from 'vitest/config';

/**
 * The checks over what the test suite recorded, run after it (`pnpm test` runs this second):
 * every AWS call against its function's role (test/iam/recorder.ts), every operation of the API
 * description answered and described by at least one test (test/openapi/responses.ts).
 */
export default defineConfig({
  test: {
    include: ['test/iam/*.check.ts', 'test/openapi/*.check.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
