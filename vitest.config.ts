import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'apps/*/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'infra/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/wire-domains.ts', 'test/support/table-per-file.ts', 'test/iam/record-calls.ts'],
    pool: 'forks',
    env: {
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // Business metrics are EMF lines on stdout: off in tests, except where a test reads them.
      POWERTOOLS_METRICS_DISABLED: 'true',
      SVC_CAPTCHA_VERIFIER: 'test',
      // Per-caller limits on, as deployed (off in `pnpm start`), high enough for any test's load:
      // every limited route counts its callers through the table, as in AWS.
      SVC_CLIENT_RATE_LIMIT: '5000/10000',
      SVC_CREDENTIALS_RATE_LIMIT: '1000/2000',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
