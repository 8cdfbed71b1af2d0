import type { MiddlewareObj } from '@middy/core';
import { clientAddress } from '../client-address';
import type { StackEvent, StackResult } from '../context';

/**
 * Before authentication and the limits: a request that went around the edge is a 403, and the
 * caller's address the limits and handlers use is the viewer's (client-address.ts).
 */
export function clientAddressCheck(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: (request) => {
      const { event } = request;
      event.svc.sourceIp = clientAddress(event.headers ?? {}, event.requestContext.http.sourceIp);
    },
  };
}
