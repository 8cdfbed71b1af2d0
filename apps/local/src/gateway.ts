import { createServer, type IncomingMessage, maxHeaderSize, type Server, STATUS_CODES } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DOMAINS, type DomainName, ROUTE_TABLE, wireDomains } from '@svc/api';
import {
  AppError,
  asFunction,
  HeadersTooLargeError,
  logger,
  NotFoundError,
  newUuid,
  PayloadTooLargeError,
  ValidationError,
} from '@svc/core';
import { errorResult, internalErrorResult, JSON_TYPE, type LambdaHandler } from '@svc/http';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { type IncomingRequest, toApiGatewayEvent } from './api-gateway-event';
import { assertLocalCaller, handleControl } from './control';
import { ensureLocalObjectStore } from './object-files';
import { compileRoutes } from './route-matcher';

export interface GatewayResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** `Set-Cookie` values (payload format 2.0 returns them apart from the headers). */
  cookies?: string[];
}

/** API Gateway's own payload limit; the handlers enforce the contract's 256 KiB below it. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;
const REPO_ROOT = resolve(import.meta.dirname, '../../..');

async function loadHandlers(): Promise<Record<DomainName, LambdaHandler>> {
  const entries = await Promise.all(
    (Object.entries(DOMAINS) as Array<[DomainName, { entry: string }]>).map(async ([name, { entry }]) => {
      const module = (await import(pathToFileURL(resolve(REPO_ROOT, entry)).href)) as { handler: LambdaHandler };
      return [name, module.handler] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<DomainName, LambdaHandler>;
}

function lambdaContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function fromLambda(result: APIGatewayProxyStructuredResultV2): GatewayResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  const body =
    result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  return {
    status: result.statusCode ?? 200,
    headers,
    body,
    ...(result.cookies && result.cookies.length > 0 ? { cookies: result.cookies } : {}),
  };
}

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): GatewayResponse {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
    body: Buffer.from(JSON.stringify(body)),
  };
}

export interface Gateway {
  handle(request: IncomingRequest): Promise<GatewayResponse>;
  listen(port: number, host?: string): Promise<Server>;
}

/** Serves the route table by invoking each route's domain handler with an API Gateway v2 event. */
export async function createGateway(options: { enableControl: boolean }): Promise<Gateway> {
  // The background work (billing, resolver, pipeline) runs domain code outside any Lambda entry.
  wireDomains();
  const handlers = await loadHandlers();
  const match = compileRoutes(ROUTE_TABLE);
  // The S3 stand-in must be up before a route signs an upload for it.
  if (options.enableControl) await ensureLocalObjectStore();

  async function handle(request: IncomingRequest): Promise<GatewayResponse> {
    const requestId = newUuid();
    if (requestLineAndHeaderBytes(request) > HTTP_API_REQUEST_LINE_AND_HEADERS) {
      return errorResponse(new HeadersTooLargeError(HTTP_API_REQUEST_LINE_AND_HEADERS), requestId);
    }
    const path = pathOf(request.url);
    if (path === undefined) return errorResponse(new NotFoundError('No such path'), requestId);
    if (options.enableControl && path.startsWith('/_local/')) {
      try {
        assertLocalCaller(request.method, request.headers);
        const body = request.body.length > 0 ? parseJson(request.body) : {};
        const query = new URL(request.url, 'http://localhost').searchParams;
        const result = await handleControl(request.method, path, body, query);
        if (result) return jsonResponse(result.status, result.body, { 'x-request-id': requestId });
      } catch (error) {
        if (error instanceof AppError) return errorResponse(error, requestId);
        throw error;
      }
    }
    const found = match(request.method.toUpperCase(), path);
    if (!found) return errorResponse(new NotFoundError('No such path'), requestId);
    const event = toApiGatewayEvent(request, found.entry.key, found.pathParameters);
    const handler = handlers[found.entry.domain];
    const result = await asFunction(found.entry.domain, () =>
      handler(event, lambdaContext(`svc-${found.entry.domain}`, event.requestContext.requestId)),
    );
    return fromLambda(result);
  }

  async function listen(port: number, host = '127.0.0.1'): Promise<Server> {
    const server = createServer((req, res) => {
      readBody(req)
        .then((body) =>
          handle({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
            headers: req.headers,
            body,
            sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          }),
        )
        .catch((error: unknown) => {
          const requestId = newUuid();
          if (error instanceof AppError) return errorResponse(error, requestId);
          logger.error('Gateway failure', { requestId, error: error as Error });
          return fromLambda(internalErrorResult(requestId));
        })
        .then((response) => {
          res.writeHead(response.status, {
            ...response.headers,
            ...(response.cookies ? { 'set-cookie': response.cookies } : {}),
            'content-length': response.body.length,
          });
          res.end(response.body);
        });
    });
    // Node answers a request it cannot parse (headers over --max-http-header-size, 16 KiB by
    // default) with a bare status line; answer in the contract's error shape instead.
    server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      const failure =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? new HeadersTooLargeError(maxHeaderSize)
          : ValidationError.field('request', 'error.request.malformed', 'The request cannot be parsed as HTTP');
      const response = errorResponse(failure, newUuid());
      const head = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
      for (const [name, value] of Object.entries(response.headers)) head.push(`${name}: ${value}`);
      head.push(`content-length: ${response.body.length}`, 'connection: close', '', '');
      socket.end(Buffer.concat([Buffer.from(head.join('\r\n')), response.body]));
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(port, host, () => done());
    });
    return server;
  }

  return { handle, listen };
}

/**
 * API Gateway's HTTP API takes at most 10,240 bytes of request line and header values ("Total
 * combined size of request line and header values", not adjustable,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html), so a longer
 * request never reaches a function in AWS; here neither. Which status AWS answers it with is not
 * documented (unknowable here): 431 in our error shape. Header names are counted too, which is
 * at least as strict.
 */
export const HTTP_API_REQUEST_LINE_AND_HEADERS = 10_240;

function requestLineAndHeaderBytes(request: IncomingRequest): number {
  let bytes = Buffer.byteLength(`${request.method} ${request.url} HTTP/1.1`);
  for (const [name, value] of Object.entries(request.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      bytes += Buffer.byteLength(name) + Buffer.byteLength(one);
    }
  }
  return bytes;
}

/** Errors the gateway answers itself carry the request id like every handler response. */
function errorResponse(error: AppError, requestId: string): GatewayResponse {
  const response = fromLambda(errorResult(error, requestId));
  response.headers['x-request-id'] = requestId;
  return response;
}

function pathOf(url: string): string | undefined {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw ValidationError.field('body', 'error.request.malformed_json', 'The request body is not valid JSON');
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is drained, not kept, so the 413 can still be answered.
      if (size <= GATEWAY_MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () =>
      size > GATEWAY_MAX_BODY ? fail(new PayloadTooLargeError(GATEWAY_MAX_BODY)) : done(Buffer.concat(chunks)),
    );
    req.on('error', fail);
  });
}
