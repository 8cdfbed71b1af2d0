import { newUuid, now, nowDate, UnauthorizedError } from '@svc/core';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { ALGORITHM, activeSigner, publicKeyFor } from './signing-keys';

export const TOKEN_LIFETIME_SECONDS = 3600;
const ISSUER = 'svc';
const AUDIENCE = 'svc-api';

export async function issueAccessToken(clientId: string): Promise<{ token: string; expiresIn: number }> {
  const { kid, key } = await activeSigner();
  const issuedAt = now();
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: ALGORITHM, kid, typ: 'JWT' })
    .setSubject(clientId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
    .setJti(newUuid())
    .sign(key);
  return { token, expiresIn: TOKEN_LIFETIME_SECONDS };
}

/** Checks signature, issuer, audience and expiry (by the service clock); returns the client id. */
export async function verifyAccessToken(token: string): Promise<string> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new UnauthorizedError('Malformed access token');
  }
  const key = kid ? await publicKeyFor(kid) : undefined;
  if (!key) throw new UnauthorizedError('Access token signed by an unknown key');
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: nowDate(),
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    if (!payload.sub) throw new UnauthorizedError('Access token without subject');
    return payload.sub;
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new UnauthorizedError('Access token expired');
    if (error instanceof UnauthorizedError) throw error;
    throw new UnauthorizedError('Invalid access token');
  }
}
