import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ApiExamples, describeApi, ROUTE_TABLE, UNLISTED_STATUSES, WITHOUT_EXAMPLE } from '@svc/api';
import { latestRun } from '../iam/recorder';
import { type RecordedExample, unheldExample } from './responses';

/**
 * `pnpm docs:examples [--run DIR] [--prune]`: takes the API description's examples from a test
 * run (the latest by default; `--run` names another, a CI run's say). Per operation it keeps one
 * successful exchange and one answer of each error status the run met. A kept example that still
 * holds against the description stays (so the file moves only when the API does); one that no
 * longer holds is replaced. Error statuses the run did not meet stay unless `--prune`.
 */
export const EXAMPLES_FILE = resolve(import.meta.dirname, '../../apps/api/src/api-examples.json');

export function recordedExamples(run: string): RecordedExample[] {
  const dir = join(run, 'responses');
  return readdirSync(dir)
    .filter((name) => name.startsWith('examples-') && name.endsWith('.jsonl'))
    .flatMap((name) =>
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as RecordedExample),
    );
}

const size = (example: RecordedExample) => JSON.stringify([example.request, example.response]).length;

/** The smallest of the exchanges (the easiest to read). */
function smallest(examples: RecordedExample[]): RecordedExample | undefined {
  return [...examples].sort((a, b) => size(a) - size(b) || a.url.localeCompare(b.url))[0];
}

export function takeExamples(recorded: RecordedExample[], kept: ApiExamples, prune: boolean): ApiExamples {
  const taken: ApiExamples = {};
  const operations = ROUTE_TABLE.filter(
    (entry) => !entry.route.hidden && entry.route.path !== '$default' && !(entry.route.operationId in WITHOUT_EXAMPLE),
  );
  for (const { route } of operations) {
    const mine = recorded.filter((example) => example.operationId === route.operationId);
    const successes = mine.filter((example) => example.status < 400);
    const declared = Object.keys(route.responses).map(Number);
    const previous = kept[route.operationId];
    const keepSuccess = previous && unheldExample(route.operationId, previous).length === 0;
    const success = keepSuccess
      ? undefined
      : (smallest(successes.filter((example) => example.status === Math.min(...declared))) ?? smallest(successes));
    if (!keepSuccess && !success) continue;
    const successStatus = keepSuccess
      ? Object.keys(previous.responses).find((status) => Number(status) < 400)
      : String(success?.status);
    const responses: Record<string, unknown> = {};
    if (keepSuccess && successStatus) responses[successStatus] = previous.responses[successStatus];
    else if (success) responses[successStatus as string] = success.response ?? null;
    const statuses = new Set([
      ...mine
        .filter((example) => example.status >= 400 && !UNLISTED_STATUSES.has(example.status))
        .map((example) => String(example.status)),
      ...(prune || !previous ? [] : Object.keys(previous.responses).filter((status) => Number(status) >= 400)),
    ]);
    for (const status of [...statuses].sort()) {
      const before = previous?.responses[status];
      const stillHolds =
        before !== undefined &&
        unheldExample(route.operationId, { url: previous?.url ?? '', responses: { [status]: before } }).length === 0;
      const taken = smallest(mine.filter((example) => String(example.status) === status));
      // `null`: an answer without a JSON body (a page).
      const answer = stillHolds ? before : taken && (taken.response ?? null);
      if (answer !== undefined) responses[status] = answer;
    }
    taken[route.operationId] = keepSuccess
      ? { ...previous, responses }
      : {
          url: (success as RecordedExample).url,
          ...(success?.request !== undefined ? { request: success.request } : {}),
          responses,
        };
  }
  return Object.fromEntries(Object.entries(taken).sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const argument = (name: string) => {
    const at = process.argv.indexOf(name);
    return at < 0 ? undefined : process.argv[at + 1];
  };
  const run = argument('--run') ?? latestRun();
  if (!run) throw new Error('No test run recorded: run `pnpm test` (or `vitest run`) first, or name one with --run');
  const kept = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as ApiExamples;
  const taken = takeExamples(recordedExamples(run), kept, process.argv.includes('--prune'));
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(taken, null, 2)}\n`);
  const operations = Object.values(describeApi().paths as Record<string, object>).reduce(
    (n, methods) => n + Object.keys(methods).length,
    0,
  );
  const errors = Object.values(taken).reduce(
    (n, example) => n + Object.keys(example.responses).filter((status) => Number(status) >= 400).length,
    0,
  );
  console.log(
    `${Object.keys(taken).length} operations with an example (of ${operations}), ${errors} error answers, from ${run}`,
  );
}
