import { startDynamoDbLocal } from '@svc/local';
import type { TestProject } from 'vitest/node';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** One in-memory DynamoDB Local for the whole run; every test file gets its own table in it. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal({});
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
