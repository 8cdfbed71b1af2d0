import { STATUS_CODES } from 'node:http';
import recorded from './api-examples.json';

/**
 * The examples of the API description, taken from the contract tests: every answer a test gets
 * through the API is held against the description and recorded (test/openapi/responses.ts), and
 * `pnpm docs:examples` keeps, per operation, one successful exchange (its request and response)
 * and one answer of each error status the tests met. `pnpm test` holds every kept example against
 * the current schemas (test/openapi/document.test.ts) and, after the run, requires an example of
 * every operation and of every error status the run met (test/openapi/examples.check.ts): an
 * example cannot drift from what the service answers.
 */
export interface OperationExample {
  /** The path and query of the successful call. */
  url: string;
  /** Its request body, as sent. */
  request?: unknown;
  /** Answers by status: the successful one and one of each error status the tests met (`null`: a page, no JSON). */
  responses: Record<string, unknown>;
}

export type ApiExamples = Record<string, OperationExample>;

export const API_EXAMPLES: ApiExamples = recorded as ApiExamples;

/** Operations without an example, and why. */
export const WITHOUT_EXAMPLE: Readonly<Record<string, string>> = {
  openApi: 'its answer is this description',
};

/**
 * Error statuses the tests meet that the description does not list per operation: a 500 comes
 * only from faults the tests inject, and any operation may answer it (the `default` response).
 */
export const UNLISTED_STATUSES: ReadonlySet<number> = new Set([500]);

type Json = Record<string, unknown>;

/** The values of a path template's parameters in a concrete path (`/payments/{uuid}`, `/payments/9f…`). */
export function pathParameters(template: string, path: string): Record<string, string> {
  const names = template.split('/');
  const values = path.split('/');
  const found: Record<string, string> = {};
  names.forEach((segment, i) => {
    const [, name, greedy] = /^\{(.+?)(\+?)\}$/.exec(segment) ?? [];
    if (!name || values[i] === undefined) return;
    found[name] = decodeURIComponent(greedy ? values.slice(i).join('/') : values[i]);
  });
  return found;
}

/**
 * The description with each operation's examples in place: the request body's, each parameter's
 * (from the URL the test called), each response's; an error status the tests met that the
 * route does not declare by itself is listed with the error shape (Simple for 401, else Nested).
 */
export function withExamples(document: Json, examples: ApiExamples): Json {
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const [path, methods] of Object.entries(paths)) {
    for (const operation of Object.values(methods)) {
      const example = examples[operation.operationId as string];
      if (!example) continue;
      const url = new URL(example.url, 'http://example.invalid');
      const values: Record<string, string> = {
        ...pathParameters(path, url.pathname),
        ...Object.fromEntries(url.searchParams),
      };
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        const value = values[parameter.name as string];
        // A URL holds strings; a number parameter's example is the number.
        const type = (parameter.schema as Json | undefined)?.type;
        if (value !== undefined) parameter.example = type === 'integer' || type === 'number' ? Number(value) : value;
      }
      const body = operation.requestBody as { content: Record<string, Json> } | undefined;
      if (body && example.request !== undefined) {
        for (const media of Object.values(body.content)) media.example = example.request;
      }
      const responses = operation.responses as Record<string, Json>;
      for (const [status, answer] of Object.entries(example.responses)) {
        const shape = status === '401' ? 'SimpleError' : 'Error';
        responses[status] ??= {
          description: STATUS_CODES[Number(status)] ?? 'Error',
          // An answer without a JSON body is a page (the hosted pages answer errors as pages).
          content:
            answer === null
              ? { 'text/html': { schema: { type: 'string' } } }
              : { 'application/json': { schema: { $ref: `#/components/schemas/${shape}` } } },
        };
        const media = (responses[status].content as Record<string, Json> | undefined)?.['application/json'];
        if (media && answer !== undefined) media.example = answer;
      }
    }
  }
  return document;
}
