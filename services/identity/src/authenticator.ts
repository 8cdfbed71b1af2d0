import type { Authenticator } from '@svc/http';
import { loadPrincipal } from './domain/clients';
import { verifyAccessToken } from './domain/tokens';

/** What every domain's HTTP stack uses to learn who is calling. */
export const authenticator: Authenticator = { verifyAccessToken, loadPrincipal };
