import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Four projects, one run: `pnpm test` runs them all (the one gate), `pnpm test:unit` the first.
 *
 * - unit: no DynamoDB (its endpoint answers nothing: a unit test that reaches the table fails),
 *   no synth, no process. Pure domain code, parsers, property tests, the stand-ins' own tests.
 * - integration: the domains and the gateway over DynamoDB Local, a fresh table per file.
 * - infra: the CDK app, synthesised once per run for every file that reads it
 *   (infra/test/support/shared-synth.ts; bundled only where a test reads the bundles).
 * - e2e: spawned processes (`pnpm start`, the operator tool, child Node processes) and the browser.
 *
 * A test file belongs to exactly one: unit and e2e are listed here, infra is infra/test, and the
 * rest is integration. DynamoDB Local starts once per run, whatever projects run (global-setup.ts).
 */
const ALL = [
  'packages/*/src/**/*.test.ts',
  'apps/*/src/**/*.test.ts',
  'services/*/src/**/*.test.ts',
  'infra/test/**/*.test.ts',
  'test/**/*.test.ts',
];

const E2E = [
  'test/browser/**/*.test.ts',
  'test/local-runtime.test.ts',
  'test/smoke.test.ts',
  'test/idempotency-crash.test.ts',
  'apps/ops/src/dlq-pull.test.ts',
  'packages/core/src/tracing.test.ts',
  'packages/outbound/src/post-json.test.ts',
];

const UNIT = [
  'packages/{core,filter,http,outbound,schedule,search,sql}/src/**/*.test.ts',
  'packages/mail/src/compose.test.ts',
  'packages/table/src/{client,entity}.test.ts',
  'services/*/src/{domain,page,providers,pipeline}/**/*.test.ts',
  'apps/local/src/object-store/**/*.test.ts',
  'apps/local/src/mail-service/**/*.test.ts',
  'apps/local/src/{background,environment}.test.ts',
  'apps/ops/src/{client-types,prewarm,providers,stripe}.test.ts',
  'test/{access-patterns,adyen-stand-in,architecture,cold-start-schemas,search-warm-up,stripe-stand-in}.test.ts',
  'test/openapi/document.test.ts',
  'test/iam/conformance.test.ts',
];

const INFRA = ['infra/test/**/*.test.ts'];

/**
 * The longest test files of the run, longest first (measured on the 2-core CI machine, seconds
 * alone: see README "The test loop"). The two workers take files in this order, then the others
 * in vitest's own (project by project, each by its last run's durations or else by size, so unit
 * files fill the end): a long file started last would otherwise run on alone after every other
 * file is done, and on a fresh clone (no durations yet) vitest would start the small slow ones
 * (the README commands, the Stripe property test) last. A file missing from the list is only
 * started later; update the list when the slowest files change.
 *
 * bundles-load is the first file to ask for the app synthesized as deployed (infra/test/support/
 * shared-synth.ts): listed early so that bundled synthesis runs beside the other long files.
 */
const SLOW_FIRST = [
  'infra/test/readme-commands.test.ts',
  'test/local-runtime.test.ts',
  'infra/test/bundles-load.test.ts',
  'test/provider-conformance.test.ts',
  'infra/test/invoke.test.ts',
  'test/stripe-faults.property.test.ts',
  'test/stripe-money-safety.test.ts',
  'test/write-heat.test.ts',
  'test/idempotency-crash.test.ts',
  'services/webhooks/src/pacing.test.ts',
  'test/adyen.test.ts',
  'test/failover.test.ts',
  'services/subscriptions/src/subscriptions.test.ts',
  'test/stripe.test.ts',
  'services/reconciliation/src/reconciliation.test.ts',
  'infra/test/platform-bundle.test.ts',
  'services/subscriptions/src/billing.test.ts',
  'test/browser/connect-page.test.ts',
  'test/business-metrics.test.ts',
  'services/payments/src/payments.test.ts',
  'services/webhooks/src/webhooks.test.ts',
  'test/provider-faults.property.test.ts',
];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FIRST.indexOf(relative(root, spec.moduleId));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    // Stable: files of equal rank keep vitest's order.
    return ordered
      .map((spec, position) => ({ spec, position, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.position - b.position)
      .map(({ spec }) => spec);
  }
}

const TABLE_SETUP = {
  globalSetup: ['test/support/global-setup.ts'],
  setupFiles: ['test/support/wire-domains.ts', 'test/support/table-per-file.ts', 'test/iam/record-calls.ts'],
};

export default defineConfig({
  test: {
    pool: 'forks',
    // Both cores: vitest's default leaves one idle (cores − 1), and most test time here is waiting
    // on DynamoDB Local, the stand-ins and spawned processes, not computing.
    maxWorkers: 2,
    // The longest files first, so that none is left running alone at the end (SLOW_FIRST above).
    sequence: { sequencer: SlowFirstSequencer },
    env: {
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // Business metrics are EMF lines on stdout: off in tests, except where a test reads them.
      POWERTOOLS_METRICS_DISABLED: 'true',
      SVC_CAPTCHA_VERIFIER: 'test',
      // Per-caller limits on, as deployed (off in `pnpm start`), high enough for any test's load:
      // every limited route counts its callers through the table, as in AWS.
      SVC_CLIENT_RATE_LIMIT: '5000/10000',
      SVC_CREDENTIALS_RATE_LIMIT: '1000/2000',
      // The providers' limiter on, as deployed, but above the tests' bursts in one frozen second
      // (Stripe's own 22/s default would hold a scenario's payments a real second each); the
      // limiter's tests set their own limits.
      SVC_PROVIDER_RATE_LIMITS: JSON.stringify({ stripe: { live: 1000, test: 1000 } }),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          exclude: E2E,
          globalSetup: ['test/support/unit-global-setup.ts'],
          setupFiles: ['test/support/unit-environment.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: ALL, exclude: [...UNIT, ...E2E, ...INFRA], ...TABLE_SETUP },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: INFRA,
          ...TABLE_SETUP,
          // The app synthesized once per run and kind for every file that reads it (support/synth.ts).
          globalSetup: [...TABLE_SETUP.globalSetup, 'infra/test/support/shared-synth.ts'],
        },
      },
      { extends: true, test: { name: 'e2e', include: E2E, ...TABLE_SETUP } },
    ],
  },
});
