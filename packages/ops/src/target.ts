import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { stackName, TABLE_NAME_OUTPUT } from '@svc/api';
import { readRuntimeFile, readSettings, startDynamoDbLocal, useLocalAws } from '@svc/local';
import { createTableIfMissing, resetDbClient } from '@svc/table';

export interface Target {
  description: string;
  close(): Promise<void>;
}

/**
 * Where an operator command writes: a deployed stage's table (credentials from the usual AWS
 * chain), or the local table — through the running `pnpm start` if there is one, else by
 * starting DynamoDB Local on the data directory for the length of the command.
 */
export async function openTarget(options: { stage?: string; table?: string }): Promise<Target> {
  if (options.stage && options.stage !== 'local') {
    const table = options.table ?? (await tableOfStage(options.stage));
    process.env.SVC_TABLE_NAME = table;
    return { description: `stage ${options.stage} (table ${table})`, close: async () => undefined };
  }
  const settings = readSettings();
  if (settings.inMemory) throw new Error('SVC_DATA_DIR=:memory: has nothing to write to outside the running service');
  const running = readRuntimeFile(settings.dataDir);
  if (running) {
    useLocalAws({ ...settings, tableName: running.tableName }, running.dynamoEndpoint);
    resetDbClient();
    return { description: `the running local service (${running.dynamoEndpoint})`, close: async () => undefined };
  }
  const dynamo = await startDynamoDbLocal({ dataDir: settings.dataDir });
  useLocalAws(settings, dynamo.endpoint);
  resetDbClient();
  await createTableIfMissing(settings.tableName);
  return {
    description: `local data in ${settings.dataDir}`,
    close: async () => {
      resetDbClient();
      await dynamo.stop();
    },
  };
}

async function tableOfStage(stage: string): Promise<string> {
  const out = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stackName(stage) }));
  const table = out.Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === TABLE_NAME_OUTPUT)?.OutputValue;
  if (!table) throw new Error(`Stack ${stackName(stage)} has no ${TABLE_NAME_OUTPUT} output`);
  return table;
}
