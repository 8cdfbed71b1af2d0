import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppProps } from 'aws-cdk-lib';
import * as z from 'zod';
import { alarmsNotifyContext, captchaSiteKeyContext } from '../../config/stages';
import { REPO_ROOT } from '../../constructs/repo-paths';

const cdkJsonSchema = z.object({ context: z.record(z.string(), z.unknown()).default({}) });

/**
 * The reCAPTCHA site keys an operator gives staging and prod at synth (`-c captchaSiteKey.<stage>=`);
 * without them those stages do not synthesize.
 */
export const TEST_CAPTCHA_SITE_KEYS: Readonly<Record<string, string>> = {
  [captchaSiteKeyContext('staging')]: 'test-site-key-staging',
  [captchaSiteKeyContext('prod')]: 'test-site-key-prod',
  // Whom the alarms of staging and prod notify: without it those stages do not synthesize either.
  [alarmsNotifyContext('staging')]: 'ops-staging@example.org',
  [alarmsNotifyContext('prod')]: 'ops@example.org,arn:aws:sns:eu-central-2:123456789012:pager',
};

/**
 * What the CLI gives the app: cdk.json's context (feature flags), the operator's site keys and
 * the test's own, and a fresh output directory. Without the flags, tests would synthesize
 * something `pnpm synth` does not.
 */
export function appProps(context: Record<string, unknown> = {}): AppProps {
  const cdkJson = cdkJsonSchema.parse(JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')));
  return {
    context: { ...cdkJson.context, ...TEST_CAPTCHA_SITE_KEYS, ...context },
    outdir: mkdtempSync(join(tmpdir(), 'svc-infra-')),
  };
}

/** Skips esbuild for tests about app structure only (what `cdk synth --exclusively` does for other stacks). */
export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
