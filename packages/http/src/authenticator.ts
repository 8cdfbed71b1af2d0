import type { Principal } from '@svc/core';

/**
 * How the stack learns who is calling. The identity domain implements it; the HTTP layer only
 * knows this interface.
 */
export interface Authenticator {
  /** Verifies a bearer token's signature and expiry; returns the client id or throws 401. */
  verifyAccessToken(token: string): Promise<string>;
  /** Loads the client's role and current grants; rejects with 401 when the client is gone. */
  loadPrincipal(clientId: string): Promise<Principal>;
}
