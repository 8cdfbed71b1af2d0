import { type AnyRoute, defineRoute, simpleErrorSchema } from '@svc/http';
import * as z from 'zod';
import { authenticateClient } from '../domain/clients';
import { issueAccessToken } from '../domain/tokens';

const tokenRequest = z.object({
  grant_type: z.literal('client_credentials', { error: 'Only the client_credentials grant is supported' }),
  client_id: z.string().min(1).max(255),
  client_secret: z.string().min(1).max(1024),
});

const tokenResponse = z.object({
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  access_token: z.string(),
});

export const identityRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/oauth2/token',
    auth: 'none',
    // Each call costs a scrypt hash: the stricter per-address limit.
    limit: 'credentials',
    operationId: 'createToken',
    summary: 'Get an access token (OAuth 2.0 client credentials)',
    description: 'JSON or form-encoded body. Tokens live 3600 s. Wrong credentials: 401 in the Simple shape.',
    accepts: ['json', 'form'],
    body: tokenRequest,
    responses: {
      200: { description: 'Access token', schema: tokenResponse },
      401: { description: 'Unknown client or wrong secret', schema: simpleErrorSchema },
    },
    handle: async ({ body }) => {
      const clientId = await authenticateClient(body.client_id, body.client_secret);
      const { token, expiresIn } = await issueAccessToken(clientId);
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        body: { token_type: 'Bearer', expires_in: expiresIn, access_token: token },
      };
    },
  }),
];
