import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SEARCH_CLUSTER_OUTPUT, SEARCH_SECRET_OUTPUT, stackName, TABLE_NAME_OUTPUT } from '@svc/api';
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
export async function openTarget(options: { stage?: string; table?: string; search?: boolean }): Promise<Target> {
  if (options.stage && options.stage !== 'local') {
    const outputs = await outputsOfStage(options.stage);
    const table = options.table ?? outputs.get(TABLE_NAME_OUTPUT);
    if (!table) throw new Error(`Stack ${stackName(options.stage)} has no ${TABLE_NAME_OUTPUT} output`);
    process.env.SVC_TABLE_NAME = table;
    if (options.search) {
      const cluster = outputs.get(SEARCH_CLUSTER_OUTPUT);
      const secret = outputs.get(SEARCH_SECRET_OUTPUT);
      if (!cluster || !secret) throw new Error(`Stack ${stackName(options.stage)} has no search engine outputs`);
      process.env.SVC_SEARCH_CLUSTER_ARN = cluster;
      process.env.SVC_SEARCH_SECRET_ARN = secret;
    }
    return { description: `stage ${options.stage} (table ${table})`, close: async () => undefined };
  }
  const settings = readSettings();
  if (settings.inMemory) throw new Error('SVC_DATA_DIR=:memory: has nothing to write to outside the running service');
  const running = readRuntimeFile(settings.dataDir);
  if (running && options.search) {
    // Its embedded search engine has the data directory open: one process at a time.
    throw new Error('Stop the running `pnpm start` first: it holds the local search engine open');
  }
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

/** A deployed stage's stack outputs, by key. */
export async function outputsOfStage(stage: string): Promise<Map<string, string>> {
  const out = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stackName(stage) }));
  return new Map(
    (out.Stacks?.[0]?.Outputs ?? []).flatMap((o) =>
      o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [],
    ),
  );
}
