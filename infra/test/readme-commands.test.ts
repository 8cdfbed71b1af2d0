import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../constructs/repo-paths';

/**
 * The README's deploy commands, run exactly as written (placeholders filled in), as far as they
 * go without an AWS account: each synth, and the bootstrap command, which synthesizes the stage
 * before it asks AWS who the caller is. A command that loses its `-c` (`pnpm synth -- -c …` hands
 * `--` to the CDK CLI, which then drops every option after it) or synthesizes every stage where
 * one was meant (and stops on a missing captcha key) fails here.
 */
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** The commands of the "## Deploy" section's first code block, continuation lines joined. */
function deployCommands(): string[] {
  const section = README.slice(README.indexOf('\n## Deploy\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.length > 0);
}

const PLACEHOLDERS: Record<string, string> = {
  '<key>': 'readme-test-site-key',
  '<e-mail>': 'ops@example.org',
  '<e-mail or SNS topic ARN>': 'arn:aws:sns:eu-central-2:123456789012:pager',
};

function filled(command: string): string {
  let out = command;
  for (const [placeholder, value] of Object.entries(PLACEHOLDERS)) out = out.split(placeholder).join(value);
  return out;
}

/** No credentials anywhere: the environment, the shared files, the instance metadata service. */
const NO_ACCOUNT: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_'))),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  CI: 'true',
};

function run(command: string) {
  // What a command synthesizes is read from cdk.out afterwards: none of an earlier run's.
  rmSync(join(REPO_ROOT, 'cdk.out'), { recursive: true, force: true });
  const result = spawnSync('bash', ['-c', command], {
    cwd: REPO_ROOT,
    env: NO_ACCOUNT,
    encoding: 'utf8',
    timeout: 600_000,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

/** The stacks the last synth wrote to cdk.out. */
function synthesizedStacks(): string[] {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.out', 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string }>;
  };
  return Object.entries(manifest.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([name]) => name)
    .sort();
}

describe("the README's deploy commands, as written", () => {
  const commands = deployCommands();

  it('are the synth, bootstrap and deploy commands, with every option straight after the script', () => {
    expect(commands.filter((command) => command.startsWith('pnpm synth'))).toHaveLength(2);
    expect(commands.some((command) => command.startsWith('pnpm exec cdk bootstrap'))).toBe(true);
    expect(commands.some((command) => command.startsWith('pnpm run deploy'))).toBe(true);
    for (const command of commands) expect(command, command).not.toMatch(/\s--(\s|$)/);
  });

  it('synthesize the one stage a command names, and every stage when given their keys', () => {
    const expected: Record<string, string[]> = {
      'pnpm synth -c stage=dev': ['svc-fundraising-dev'],
    };
    for (const command of commands.filter((line) => line.startsWith('pnpm synth'))) {
      const { status, output } = run(filled(command));
      expect(status, `${command}\n${output.slice(-2000)}`).toBe(0);
      expect(synthesizedStacks(), command).toEqual(
        // Staging and prod each with their us-east-1 web ACL stack (docs/operations.md "Edge").
        expected[command] ?? [
          'svc-fundraising-dev',
          'svc-fundraising-prod',
          'svc-fundraising-prod-edge-firewall',
          'svc-fundraising-staging',
          'svc-fundraising-staging-edge-firewall',
        ],
      );
    }
  }, 600_000);

  it('bootstrap synthesizes the one stage it names, then stops only for want of an account', () => {
    const command = commands.find((line) => line.startsWith('pnpm exec cdk bootstrap')) ?? '';
    const { status, output } = run(filled(command));
    // Not the missing captcha key of a stage it was not asked for: the synth went through.
    expect(output).not.toMatch(/captcha/i);
    expect(output).not.toMatch(/alarmsNotify/);
    expect(status, output.slice(-2000)).not.toBe(0);
    expect(output).toMatch(/credentials|Unable to resolve AWS account|account/i);
    expect(synthesizedStacks()).toEqual(['svc-fundraising-dev']);
  }, 300_000);
});
