import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeApi, type OperationExample, ROUTE_TABLE } from '@svc/api';
import { compileRoutes } from '@svc/local';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Every JSON response a test receives through the API is held against `/openapi.json`: the
 * schema its route declares for that status (or the error schema), read by Ajv in strict mode,
 * with every declared object closed. A field the schema does not declare, a missing required
 * field or a status the route does not declare fails the test that made the call; the example is
 * recorded, and the check after the run (openapi.check.ts) requires one for every operation.
 */
type Json = Record<string, unknown>;

let compiled:
  | {
      document: Json;
      match: ReturnType<typeof compileRoutes>;
      ajv: Ajv2020;
      validators: Map<string, ValidateFunction>;
    }
  | undefined;

function setup() {
  if (compiled) return compiled;
  const document = describeApi();
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  // OpenAPI's own keywords beside JSON Schema's.
  ajv.addKeyword('example');
  const components = (document.components as Json).schemas as Json;
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: referToComponents(components) });
  compiled = { document, match: compileRoutes(ROUTE_TABLE), ajv, validators: new Map() };
  return compiled;
}

export interface ResponseCheck {
  operationId: string;
  method: string;
  path: string;
  status: number;
  /** The response key the body was held against: the status, or `default`. */
  declared: string;
  errors: string[];
}

const COMPONENTS_ID = 'https://svc.invalid/components';

/** The schema with each `#/components/schemas/…` reference pointing into the components schema Ajv holds. */
function referToComponents(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(referToComponents);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${value.slice('#/components/schemas/'.length)}`
        : referToComponents(value),
    ]),
  );
}

/** Holds one response against the description; undefined for paths outside the route table. */
export function checkResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
): ResponseCheck | undefined {
  const { document, match, ajv, validators } = setup();
  // A path no URL parser reads (hostile-input tests send them) reaches no route.
  const path = URL.canParse(url, 'http://local') ? new URL(url, 'http://local').pathname : undefined;
  const found = path === undefined ? undefined : match(method.toUpperCase(), path);
  if (!found || found.entry.route.hidden || found.entry.key === '$default') return undefined;
  const route = found.entry.route;
  const operation = (document.paths as Json)[route.path] as Json;
  const responses = (operation[route.method.toLowerCase()] as Json).responses as Json;
  const declared = String(status) in responses ? String(status) : status >= 400 ? 'default' : undefined;
  const check = { operationId: route.operationId, method: route.method, path: route.path, status };
  if (!declared) return { ...check, declared: '-', errors: [`status ${status} is not declared`] };
  const isJson = (contentType ?? '').startsWith('application/json');
  const content = (responses[declared] as Json).content as Json | undefined;
  if (!isJson) {
    const errors = content?.['application/json'] ? [`declares JSON but answered ${contentType ?? 'no body'}`] : [];
    return { ...check, declared, errors };
  }
  if (!content?.['application/json']) {
    return { ...check, declared, errors: [`answered JSON but declares no JSON body for ${declared}`] };
  }
  const key = `${route.operationId} ${declared}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(referToComponents((content['application/json'] as Json).schema) as Json);
    validators.set(key, validate);
  }
  const errors = validate(body)
    ? []
    : (validate.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
  return { ...check, declared, errors };
}

/** One answer as recorded for the check after the run. */
export interface RecordedResponse {
  operationId: string;
  status: number;
  declared: string;
  ok: boolean;
}

/**
 * One exchange as the tests made it, kept as the operation's example (the first described answer
 * of each status, per test process): `pnpm docs:examples` takes them into the API description.
 */
export interface RecordedExample {
  operationId: string;
  method: string;
  /** The path and query the test called. */
  url: string;
  status: number;
  request?: unknown;
  response?: unknown;
}

const examplesTaken = new Set<string>();

/** Records a checked response for the check after the run (beside the run's AWS calls). */
export function recordResponse(
  check: ResponseCheck,
  exchange?: { url: string; request?: unknown; response?: unknown },
) {
  const dir = process.env.TEST_AWS_CALLS_DIR;
  if (!dir) return;
  const responses = join(dir, 'responses');
  mkdirSync(responses, { recursive: true });
  const { operationId, status, declared, errors } = check;
  appendFileSync(
    join(responses, `${process.pid}.jsonl`),
    `${JSON.stringify({ operationId, status, declared, ok: errors.length === 0 } satisfies RecordedResponse)}\n`,
  );
  const key = `${operationId} ${status}`;
  if (!exchange || errors.length > 0 || examplesTaken.has(key)) return;
  examplesTaken.add(key);
  // The request of a success only (an error example shows the answer); a body too deep to write
  // again (the hostile-input tests send them) is no example.
  const { request, ...rest } = exchange;
  const example: RecordedExample = {
    operationId,
    method: check.method,
    status,
    ...rest,
    ...(status < 400 ? { request } : {}),
  };
  let line: string;
  try {
    line = JSON.stringify(example);
  } catch {
    return;
  }
  appendFileSync(join(responses, `examples-${process.pid}.jsonl`), `${line}\n`);
}

/** The response check as a test assertion: throws, naming the operation and each difference. */
export function assertConforms(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
  request?: unknown,
) {
  const check = checkResponse(method, url, status, contentType, body);
  if (!check) return;
  recordResponse(check, { url, request, response: body });
  if (check.errors.length > 0) {
    throw new Error(
      `${check.method} ${check.path} (${check.operationId}) answered ${status}, which /openapi.json does not describe:\n  ${check.errors.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

/**
 * What in a kept example no longer holds against the description: its URL must reach its
 * operation, its request body must pass the route's request schema, each answer the schema of its
 * status (`null` stands for an answer without a JSON body, an HTML page).
 */
export function unheldExample(operationId: string, example: OperationExample): string[] {
  const entry = ROUTE_TABLE.find((candidate) => candidate.route.operationId === operationId);
  if (!entry) return [`${operationId} is no operation of the route table`];
  const { route } = entry;
  const problems: string[] = [];
  if (example.request !== undefined && route.body) {
    const parsed = route.body.safeParse(example.request);
    if (!parsed.success) problems.push(`request: ${parsed.error.message}`);
  }
  for (const [status, answer] of Object.entries(example.responses)) {
    const check = checkResponse(
      route.method,
      example.url,
      Number(status),
      answer === null ? undefined : 'application/json',
      answer,
    );
    if (!check) problems.push(`${example.url} reaches no operation`);
    else if (check.operationId !== operationId) problems.push(`${example.url} reaches ${check.operationId}`);
    else problems.push(...check.errors.map((error) => `${status}: ${error}`));
  }
  return problems;
}
