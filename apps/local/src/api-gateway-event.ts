import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface IncomingRequest {
  method: string;
  /** Path and query as received, e.g. `/accounts?organisation_uuid=…`. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  sourceIp: string;
}

const TEXT_TYPES = /^(application\/(json|[a-z.+-]*\+json|x-www-form-urlencoded|xml)|text\/)/i;

/**
 * Builds the payload format 2.0 event that API Gateway HTTP APIs hand to Lambda: lower-case
 * headers (repeats joined by commas), cookies apart, query parameters decoded (repeats joined),
 * binary bodies base64-encoded.
 */
export function toApiGatewayEvent(
  request: IncomingRequest,
  routeKey: string,
  pathParameters: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const url = new URL(request.url, 'http://localhost');
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (lower === 'cookie') {
      cookies = (Array.isArray(value) ? value.join('; ') : value).split(/;\s*/).filter(Boolean);
      continue;
    }
    headers[lower] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  }
  const contentType = headers['content-type'] ?? '';
  const isText = request.body.length === 0 || contentType === '' || TEXT_TYPES.test(contentType);
  const time = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: request.method.toUpperCase(),
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: time.toUTCString(),
      timeEpoch: time.getTime(),
    },
    ...(request.body.length > 0
      ? { body: isText ? request.body.toString('utf8') : request.body.toString('base64') }
      : {}),
    isBase64Encoded: request.body.length > 0 && !isText,
  };
}
