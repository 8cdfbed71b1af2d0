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
  /** Bytes of a document (a PDF): sent base64-encoded, as API Gateway sends binary answers. */
  binary?: { contentType: string; bytes: Uint8Array };
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
  /**
   * The caller's address (a SEPA mandate records the donor's): API Gateway's source address, or
   * behind the edge the viewer's address CloudFront reports (client-address.ts).
   */
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
  /** The body is a document of this media type (`application/pdf`, `text/csv`). */
  media?: string;
}

/**
 * How a route without a bearer token is limited per caller address (middleware/rate-limit.ts,
 * docs/API.md "Rate limits"): `credentials` for routes that check a secret or a password (the
 * token route, the onboarding token's connect and onboard, the hosted page's sign-in),
 * `address` for every other unauthenticated action (the hosted and simulated pages, the e-mail
 * existence check, provider return pages), `provider-callback` for a provider's signed events
 * (generous: a provider sends in bursts), `public-read` for health and the API description.
 */
export type AddressLimit = 'credentials' | 'address' | 'provider-callback' | 'public-read';

/**
 * A route takes a bearer token (limited per client), or none and then MUST name its address
 * limit: the type refuses an unauthenticated route without one.
 */
export type RouteAccess = { auth: 'token'; limit?: never } | { auth: 'none'; limit: AddressLimit };

export type RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> = RouteShape<P, Q, B> & RouteAccess;

export interface RouteShape<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: HttpMethod;
  /** API Gateway path template, e.g. `/organisations/{organisation_uuid}`; `$default` for the fallback. */
  path: string;
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
