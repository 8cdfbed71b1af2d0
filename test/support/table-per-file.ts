import { createTableIfMissing } from '@svc/table';
import { beforeAll } from 'vitest';
import { useTestEnvironment } from './test-environment';

/** Each test file runs against its own fresh table in the shared DynamoDB Local. */
const table = useTestEnvironment('test');

beforeAll(async () => {
  await createTableIfMissing(table);
});
