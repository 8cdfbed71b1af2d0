import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_EXAMPLES, describeApi, UNLISTED_STATUSES } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { latestRun } from '../iam/recorder';
import type { RecordedResponse } from './responses';

/**
 * Runs after the test suite (`pnpm test`): every answer a test received through the API was held
 * against `/openapi.json` as it came (test/openapi/responses.ts) and recorded. Here: every
 * operation the description lists has at least one successful answer that matched its schema,
 * so no route's schema goes untried; and every error status an operation answered is listed for it,
 * with an example (apps/api/src/api-examples.json, taken from the run by `pnpm docs:examples`).
 */
function recorded(): RecordedResponse[] {
  const run = latestRun();
  if (!run) throw new Error('No test run recorded; run `vitest run` first');
  const dir = join(run, 'responses');
  return (
    readdirSync(dir)
      // The answers' checks (the examples the run kept are beside them, `examples-*.jsonl`).
      .filter((name) => name.endsWith('.jsonl') && !name.startsWith('examples-'))
      .flatMap((name) =>
        readFileSync(join(dir, name), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as RecordedResponse),
      )
  );
}

describe('the API description against the test run', () => {
  it('has every operation answered successfully, and as described, by at least one test', () => {
    const responses = recorded();
    const document = describeApi() as { paths: Record<string, Record<string, { operationId: string }>> };
    const operations = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    const described = new Set(responses.filter((r) => r.ok && r.status < 400).map((r) => r.operationId));
    expect(operations.filter((operation) => !described.has(operation))).toEqual([]);
    expect(responses.filter((r) => !r.ok).map((r) => `${r.operationId} ${r.status}`)).toEqual([]);
  });

  it('lists, with an example, every error status an operation answered in this run', () => {
    const unlisted = new Set(
      recorded()
        .filter((r) => r.status >= 400 && !UNLISTED_STATUSES.has(r.status))
        .filter((r) => API_EXAMPLES[r.operationId]?.responses[String(r.status)] === undefined)
        .map((r) => `${r.operationId} ${r.status}`),
    );
    expect([...unlisted].sort(), 'take them into the description with `pnpm docs:examples`').toEqual([]);
  });
});
