import type { Principal } from '@svc/core';
import type * as z from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type BodyFormat = 'json' | 'form' | 'multipart';

/** A `multipart/form-data` body as received; the route reads its parts (e.g. with `formData()`). */
export interface MultipartBody {
  contentType: string;
  bytes: Buffer;
  /** The parts, read once by the body parser. */
  form: FormData;
}

/** What a route handler returns; the stack turns it into an API Gateway v2 result. */
export interface HttpResult {
  status: number;
  /** JSON-serialised unless `html` or `text` is set. */
  body?: unknown;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  /** `Set-Cookie` values. */
  cookies?: string[];
}

export interface RouteRequest<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  headers: Readonly<Record<string, string | undefined>>;
  /** Request cookies by name (the first of repeated names). */
  cookies: Readonly<Record<string, string>>;
  requestId: string;
  /** The service's public base address (`SVC_PUBLIC_URL`, else the API's own domain). */
  baseUrl: string;
  /** The caller's address as API Gateway saw it (a SEPA mandate records the donor's). */
  sourceIp: string;
  /** The body as received (a provider's signature covers these exact bytes). */
  rawBody: string;
  /** The caller, with grants loaded fresh for this request. Throws 401 on routes without auth. */
  principal: () => Promise<Principal>;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body. An error status without one has the Nested error shape. */
  schema?: z.ZodType;
  /** The body is an HTML page (the hosted pages), not JSON. */
  html?: true;
  /** The body is plain text (a provider's expected acknowledgement, Adyen's `[accepted]`). */
  text?: true;
}

export interface RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** API Gateway path template, e.g. `/organisations/{organisation_uuid}`; `$default` for the fallback. */
  path: string;
  auth: 'token' | 'none';
  operationId: string;
  summary: string;
  description?: string;
  /** Path parameters; a value that fails this schema (a malformed uuid) is a 404. */
  params?: P;
  query?: Q;
  body?: B;
  /** Body formats accepted; JSON by default. */
  accepts?: readonly BodyFormat[];
  /** The largest body this route takes (default MAX_BODY_BYTES, 256 KiB); larger is a 413. */
  maxBodyBytes?: number;
  responses: Record<number, ResponseSpec>;
  /**
   * The route changes nothing even though its method is POST (searches): it keeps no
   * idempotency records, and the infrastructure grants its domain no write access for it.
   */
  readOnly?: boolean;
  /** Leave out of the API description (the fallback route). */
  hidden?: boolean;
  /**
   * `credentials`: the route checks a secret (the token route): limited per source address by
   * the stricter credentials limit instead of per client (middleware/rate-limit.ts).
   */
  limit?: 'credentials';
  handle: (request: RouteRequest<z.output<P>, z.output<Q>, z.output<B>>) => Promise<HttpResult>;
}

export type AnyRoute = RouteDefinition<z.ZodType, z.ZodType, z.ZodType>;

/** Identity function that lets TypeScript infer a route's parameter, query and body types. */
export function defineRoute<
  P extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  B extends z.ZodType = z.ZodUndefined,
>(route: RouteDefinition<P, Q, B>): AnyRoute {
  return route as unknown as AnyRoute;
}

export function routeKey(route: Pick<AnyRoute, 'method' | 'path'>): string {
  return route.path === '$default' ? '$default' : `${route.method} ${route.path}`;
}
