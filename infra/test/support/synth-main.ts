import { createServiceApp } from '../../stacks/service-app';
import { appProps, SKIP_BUNDLING } from './app-props';
import { isSynthKind } from './synth-kinds';

/**
 * One synth of the app into a given directory, in a process of its own (shared-synth.ts starts it
 * once per run and kind): `node --import tsx infra/test/support/synth-main.ts <kind> <outdir>`.
 * Synthesis runs cdk-nag, and an unacknowledged finding makes it fail (exit code 1).
 */
const [kind, outdir] = process.argv.slice(2);
if (!isSynthKind(kind) || !outdir) throw new Error('usage: synth-main.ts <templates|as-deployed> <outdir>');
if (kind === 'templates') process.env.CDK_VALIDATION = 'false';
const { app } = createServiceApp({ ...appProps(kind === 'templates' ? SKIP_BUNDLING : {}), outdir });
app.synth();
