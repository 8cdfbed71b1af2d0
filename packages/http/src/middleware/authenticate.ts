import type { MiddlewareObj } from '@middy/core';
import { UnauthorizedError } from '@svc/core';
import type { Authenticator } from '../authenticator';
import type { StackEvent, StackResult } from '../context';

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i;

/**
 * Verifies the bearer token and starts loading the caller's grants without waiting for them:
 * the handler's own first read goes out in the same round trip (see @svc/table getItem), and
 * the stack awaits the grants before any response leaves, so a gone client is always a 401.
 */
export function authenticate(authenticator: Authenticator): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: async (request) => {
      const { svc, headers } = request.event;
      if (svc.route.auth === 'none') return;
      const match = BEARER.exec(headers.authorization ?? '');
      if (!match?.[1]) throw new UnauthorizedError('Missing or malformed bearer token');
      const clientId = await authenticator.verifyAccessToken(match[1]);
      svc.clientId = clientId;
      const principal = authenticator.loadPrincipal(clientId);
      principal.catch(() => undefined);
      svc.principal = principal;
    },
  };
}
