/**
 * The two syntheses of the whole app (every stage) a test run shares (shared-synth.ts):
 * - `templates`: without esbuild (the assets' hashes stand in) and without CDK's CloudFormation
 *   schema validation (about 15 s); for the tests that read only the templates. cdk-nag runs.
 * - `as-deployed`: what `pnpm synth` builds: every function's code built with esbuild (identical
 *   bundles shared between stages), CloudFormation validation and its report; for the tests that
 *   read the bundles or the report.
 */
export const SYNTH_KINDS = ['templates', 'as-deployed'] as const;
export type SynthKind = (typeof SYNTH_KINDS)[number];

export const isSynthKind = (value: unknown): value is SynthKind => SYNTH_KINDS.includes(value as SynthKind);
