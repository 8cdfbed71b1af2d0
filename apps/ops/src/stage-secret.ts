import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { stackName } from '@svc/api';

/**
 * A deployed stage's secret that an operator fills in (Stripe keys, the reCAPTCHA secret key),
 * found by its stack output. `what` names the command for the error a missing stage gets.
 */
export async function stageSecret(
  stage: string | undefined,
  outputKey: string,
  what: string,
): Promise<{ secretId: string; secrets: SecretsManagerClient }> {
  if (!stage || stage === 'local') {
    throw new Error(`${what} needs --stage <stage>; locally set the variables for pnpm start instead`);
  }
  const stacks = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stackName(stage) }));
  const secretId = stacks.Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === outputKey)?.OutputValue;
  if (!secretId) throw new Error(`Stack ${stackName(stage)} has no ${outputKey} output`);
  return { secretId, secrets: new SecretsManagerClient({}) };
}
