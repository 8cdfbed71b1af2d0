import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import { logger, tracerMiddleware, UnauthorizedError, withResourceNaming } from '@svc/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Authenticator } from './authenticator';
import type { StackEvent, StackHandler } from './context';
import { authenticate } from './middleware/authenticate';
import { bodyParser } from './middleware/body-parser';
import { clientAddressCheck } from './middleware/client-address';
import { errorMapper } from './middleware/error-mapper';
import { idempotency, replayedResponse, resourceNaming } from './middleware/idempotency';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { validate } from './middleware/validate';
import { toLambdaResult } from './responses';
import { type AnyRoute, type HttpResult, routeKey } from './route';

export type LambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * One Lambda per domain: each route gets the same middy stack, in one fixed order
 * (middleware first, handler last), and the exported handler picks the route by routeKey.
 * Authentication comes before body parsing and validation, so a caller without a valid token
 * learns nothing about its input (401 first).
 */
export function createDomainHandler(routes: readonly AnyRoute[], authenticator: Authenticator): LambdaHandler {
  const stacks = new Map<string, StackHandler>();
  for (const route of routes) {
    const location = createdLocation(route, routes);
    if (location) LOCATIONS.set(route, location);
    stacks.set(routeKey(route), buildStack(route, authenticator));
  }
  const fallback = stacks.get('$default');
  return async (event, context) => {
    const stack = stacks.get(event.routeKey) ?? fallback;
    if (!stack) throw new Error(`No route ${event.routeKey} in this function`);
    return stack(event as StackEvent, context);
  };
}

/**
 * Where a resource a POST created is read: the GET route one `{uuid}` segment below the POST's
 * path (`POST /payments` → `/payments/{payment_uuid}`). A 201 answer names it in `Location`, as
 * HTTP says a 201 does (RFC 9110, 15.3.2), relative to the API's base.
 */
const LOCATIONS = new WeakMap<AnyRoute, string>();

function createdLocation(route: AnyRoute, routes: readonly AnyRoute[]): string | undefined {
  if (route.method !== 'POST') return undefined;
  const single = routes.find(
    (other) =>
      other.method === 'GET' &&
      /^\{[a-z_]+\}$/.test(other.path.slice(route.path.length + 1)) &&
      other.path.startsWith(`${route.path}/`),
  );
  return single?.path;
}

function withLocation(route: AnyRoute, result: HttpResult): HttpResult {
  const template = LOCATIONS.get(route);
  const uuid = (result.body as { uuid?: unknown } | undefined)?.uuid;
  if (result.status !== 201 || !template || typeof uuid !== 'string') return result;
  const location = template.replace(/\{[a-z_]+\}/, encodeURIComponent(uuid));
  return { ...result, headers: { location, ...(result.headers ?? {}) } };
}

function buildStack(route: AnyRoute, authenticator: Authenticator): StackHandler {
  const stack = middy<StackEvent, APIGatewayProxyStructuredResultV2, Error, Context>();
  // Where the stage traces calls: the handler's subsegment (cold start annotated), never the response.
  const traced = tracerMiddleware();
  if (traced) stack.use(traced);
  return stack
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(requestContext(route))
    .use(httpHeaderNormalizer({ canonical: false }))
    .use(errorMapper())
    .use(clientAddressCheck())
    .use(authenticate(authenticator))
    .use(rateLimit())
    .use(bodyParser())
    .use(validate())
    .use(idempotency())
    .handler(dispatch);
}

function cookiesOf(cookies: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const cookie of cookies ?? []) {
    const at = cookie.indexOf('=');
    if (at <= 0) continue;
    const name = cookie.slice(0, at).trim();
    if (!(name in out)) out[name] = cookie.slice(at + 1).trim();
  }
  return out;
}

async function dispatch(event: StackEvent): Promise<APIGatewayProxyStructuredResultV2> {
  const { svc } = event;
  const principal = svc.principal;
  const replay = replayedResponse(event);
  if (replay) {
    // A replay goes only to a caller who still exists.
    if (principal) await principal;
    return replay;
  }
  // Inside an idempotent request, what the handler creates is named from the key's seed.
  const result = await withResourceNaming(resourceNaming(event), () =>
    svc.route.handle({
      params: svc.params,
      query: svc.query,
      body: svc.body,
      headers: event.headers,
      cookies: cookiesOf(event.cookies),
      requestId: svc.requestId,
      baseUrl: process.env.SVC_PUBLIC_URL ?? `https://${event.requestContext.domainName}`,
      sourceIp: svc.sourceIp,
      rawBody: svc.rawBody,
      principal: () => principal ?? Promise.reject(new UnauthorizedError('This route takes no token')),
    }),
  ).finally(async () => {
    // The grants were loaded alongside the handler's reads; a caller who is gone gets a 401
    // whatever the handler found.
    if (principal) await principal;
  });
  return toLambdaResult(withLocation(svc.route, result));
}
