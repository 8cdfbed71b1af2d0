import { randomUUID } from 'node:crypto';
import { resumeRealTime } from '@svc/core';
import { createTableIfMissing } from '@svc/table';
import { afterEach, beforeAll, inject } from 'vitest';

/** Each test file runs against its own fresh table in the shared DynamoDB Local. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_REGION = 'eu-central-2';
process.env.AWS_ACCESS_KEY_ID = 'local';
process.env.AWS_SECRET_ACCESS_KEY = 'local';
process.env.AWS_ENDPOINT_URL_DYNAMODB = inject('dynamoEndpoint');
process.env.SVC_TABLE_NAME = `test-${randomUUID()}`;
process.env.SVC_DATA_DIR = ':memory:';
process.env.SVC_STAGE = 'test';
// As in the local runtime: test webhook receivers listen on 127.0.0.1.
process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

beforeAll(async () => {
  await createTableIfMissing(process.env.SVC_TABLE_NAME as string);
});

afterEach(() => {
  resumeRealTime();
});
