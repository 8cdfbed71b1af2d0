import type { MiddlewareObj } from '@middy/core';
import { newUuid } from '@svc/core';
import type { StackEvent, StackResult } from '../context';
import type { AnyRoute } from '../route';

/**
 * First in, last out: fixes the request id and stamps `X-Request-Id` on every response,
 * success or error.
 */
export function requestContext(route: AnyRoute): MiddlewareObj<StackEvent, StackResult> {
  const stamp = (request: { event: StackEvent; response: StackResult | null }) => {
    if (!request.response) return;
    request.response.headers = { ...(request.response.headers ?? {}), 'x-request-id': request.event.svc.requestId };
  };
  return {
    before: (request) => {
      const requestId = request.event.requestContext?.requestId || newUuid();
      const sourceIp = request.event.requestContext?.http?.sourceIp ?? '';
      request.event.svc = { route, requestId, rawBody: '', sourceIp, parsedBody: undefined };
    },
    after: stamp,
    onError: stamp,
  };
}
