import { randomUUID } from 'node:crypto';
import { resumeRealTime } from '@svc/core';
import { afterEach, inject } from 'vitest';

/**
 * Every test file's environment, as the local runtime sets it: the SDK's region and dummy
 * credentials, DynamoDB at the run's endpoint (global-setup.ts), a table name of the file's own,
 * the search engine in memory, the test stage, webhook receivers on 127.0.0.1. The clock is the
 * real one again after each test. Answers the table's name.
 */
export function useTestEnvironment(tablePrefix: string): string {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.AWS_REGION = 'eu-central-2';
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  process.env.AWS_ENDPOINT_URL_DYNAMODB = inject('dynamoEndpoint');
  process.env.SVC_TABLE_NAME = `${tablePrefix}-${randomUUID()}`;
  process.env.SVC_DATA_DIR = ':memory:';
  process.env.SVC_STAGE = 'test';
  // As in the local runtime: test webhook receivers listen on 127.0.0.1.
  process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  afterEach(() => {
    resumeRealTime();
  });
  return process.env.SVC_TABLE_NAME;
}
