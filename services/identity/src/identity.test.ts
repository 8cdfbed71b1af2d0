import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { advanceClock, freezeClock, logger } from '@svc/core';
import { db, tableName } from '@svc/table';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { addGrant, createClient, removeOrganisationGrants } from './index';

const tokenBody = { grant_type: 'client_credentials', client_id: DEMO.client.id, client_secret: DEMO.client.secret };

beforeAll(async () => {
  await seedDemo();
});

describe('POST /oauth2/token', () => {
  it('issues a Bearer token for 3600 s from a JSON body', async () => {
    const response = await call('POST', '/oauth2/token', { body: tokenBody });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ token_type: 'Bearer', expires_in: 3600, access_token: expect.any(String) });
    expect(response.headers['cache-control']).toBe('no-store');
    const header = decodeProtectedHeader(response.json.access_token);
    expect(header.alg).toBe('ES256');
    expect(header.kid).toEqual(expect.any(String));
    const claims = decodeJwt(response.json.access_token);
    expect(claims.sub).toBe(DEMO.client.id);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
  });

  it('accepts a form-encoded body', async () => {
    const response = await call('POST', '/oauth2/token', {
      rawBody: new URLSearchParams(tokenBody).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(200);
    expect(response.json.token_type).toBe('Bearer');
  });

  it('answers 401 in the Simple shape for a wrong secret and for an unknown client', async () => {
    for (const body of [
      { ...tokenBody, client_secret: 'wrong-secret' },
      { ...tokenBody, client_id: 'nobody' },
    ]) {
      const response = await call('POST', '/oauth2/token', { body });
      expect(response.status).toBe(401);
      expect(response.json).toEqual({ message: expect.any(String) });
    }
  });

  it('answers 400 naming the field when a field is missing', async () => {
    for (const field of ['grant_type', 'client_id', 'client_secret'] as const) {
      const { [field]: _omitted, ...body } = tokenBody;
      const response = await call('POST', '/oauth2/token', { body });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('bad_request');
      expect(response.json.error.message).toContainEqual(
        expect.objectContaining({ property: field, code: 'error.validation.not_blank' }),
      );
    }
  });

  it('refuses the refresh_token grant and any other grant type with 400', async () => {
    for (const grantType of ['refresh_token', 'password', 'authorization_code']) {
      const response = await call('POST', '/oauth2/token', { body: { ...tokenBody, grant_type: grantType } });
      expect(response.status).toBe(400);
      expect(response.json.error.message[0].property).toBe('grant_type');
    }
  });

  it('answers 400 to malformed JSON and 415 to an unexpected content type', async () => {
    const malformed = await call('POST', '/oauth2/token', {
      rawBody: '{"grant_type": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.message[0].code).toBe('error.request.malformed_json');
    const xml = await call('POST', '/oauth2/token', {
      rawBody: '<a/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(415);
    expect(xml.json.error.http_code).toBe(415);
  });
});

describe('access tokens', () => {
  it('expire after 3600 s by the service clock', async () => {
    freezeClock(2_000_000_000);
    const token = await tokenFor(DEMO.client);
    advanceClock(3599);
    expect((await call('GET', '/organisations', { token })).status).toBe(200);
    advanceClock(1);
    const expired = await call('GET', '/organisations', { token });
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual({ message: 'Access token expired' });
  });

  it('are judged expired by the service clock on their first use too', async () => {
    freezeClock(2_100_000_000);
    const fresh = await tokenFor(DEMO.client);
    const stale = await tokenFor(DEMO.otherClient);
    advanceClock(3599);
    expect((await call('GET', '/organisations', { token: fresh })).status).toBe(200);
    advanceClock(1);
    const expired = await call('GET', '/organisations', { token: stale });
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual({ message: 'Access token expired' });
  });

  it('are refused with a foreign issuer or audience, or signed HS256 with the public key', async () => {
    const genuine = await tokenFor(DEMO.client);
    const { kid } = decodeProtectedHeader(genuine);
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = (issuer: string, audience: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', ...(kid ? { kid } : {}) })
        .setSubject(DEMO.client.id)
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
    const published = (await db().send(new ScanCommand({ TableName: tableName() }))).Items?.find(
      (item) => item.entity === 'signing_keys',
    );
    const publicJwk = JSON.stringify(published?.keys?.[0]);
    const hs256 = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', ...(kid ? { kid } : {}) })
      .setSubject(DEMO.client.id)
      .setIssuer('svc')
      .setAudience('svc-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(publicJwk));
    for (const token of [await foreign('evil', 'svc-api'), await foreign('svc', 'other-api'), hs256]) {
      expect((await call('GET', '/organisations', { token })).status).toBe(401);
    }
  });

  it('are refused when forged: foreign key, same kid with foreign key, tampered claims, alg none', async () => {
    const genuine = await tokenFor(DEMO.client);
    const { kid } = decodeProtectedHeader(genuine);
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const sign = (headerKid: string | undefined) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', ...(headerKid ? { kid: headerKid } : {}) })
        .setSubject(DEMO.client.id)
        .setIssuer('svc')
        .setAudience('svc-api')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
    const [header, payload, signature] = genuine.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(genuine), sub: DEMO.otherClient.id })).toString(
      'base64url',
    );
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${payload}.`;
    const forged = [
      await sign(undefined),
      await sign(kid),
      await sign((await exportJWK(publicKey)).x),
      `${header}.${tamperedPayload}.${signature}`,
      none,
      'not-a-jwt',
    ];
    for (const token of forged) {
      const response = await call('GET', '/organisations', { token });
      expect(response.status, token).toBe(401);
      expect(Object.keys(response.json)).toEqual(['message']);
    }
  });

  it('follow grant changes at once, for tokens issued before the change', async () => {
    const created = await createClient({ grants: [] });
    const token = await tokenFor({ id: created.client_id, secret: created.client_secret });
    expect((await call('GET', `/organisations/${DEMO.org}`, { token })).status).toBe(403);
    await addGrant(created.client_id, { organisation_uuid: DEMO.org });
    expect((await call('GET', `/organisations/${DEMO.org}`, { token })).status).toBe(200);
    await removeOrganisationGrants(created.client_id, DEMO.org);
    expect((await call('GET', `/organisations/${DEMO.org}`, { token })).status).toBe(403);
  });
});

describe('client secrets', () => {
  it('are stored only as scrypt hashes and never logged, even at DEBUG level', async () => {
    logger.setLogLevel('DEBUG');
    const writes: string[] = [];
    const capture = (chunk: unknown) => {
      writes.push(String(chunk));
      return true;
    };
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    const log = vi.spyOn(console, 'log').mockImplementation((...args) => capture(args.join(' ')));
    let created: { client_id: string; client_secret: string };
    try {
      created = await createClient({ grants: [{ organisation_uuid: DEMO.org }] });
      await tokenFor({ id: created.client_id, secret: created.client_secret });
      await call('POST', '/oauth2/token', { body: { ...tokenBody, client_secret: `${created.client_secret}x` } });
    } finally {
      logger.setLogLevel('WARN');
      out.mockRestore();
      err.mockRestore();
      log.mockRestore();
    }
    expect(writes.join('\n')).not.toContain(created.client_secret);

    const dump = JSON.stringify((await db().send(new ScanCommand({ TableName: tableName() }))).Items);
    expect(dump).not.toContain(created.client_secret);
    expect(dump).not.toContain(DEMO.client.secret);
    expect(dump).toMatch(/"secret_hash":"scrypt\$32768\$8\$1\$/);
  });
});

describe('grants', () => {
  it('are kept by a re-seed that does not list them, even one racing a grant change', async () => {
    const partnerOrg = '0a0b0c0d-0e0f-4a1b-8c2d-3e4f5a6b7c8d';
    await Promise.all([addGrant('demo-partner', { organisation_uuid: partnerOrg }), seedDemo()]);
    await seedDemo();
    const partner = await tokenFor({ id: 'demo-partner', secret: 'partner-secret-change-me' });
    const response = await call('GET', `/accounts?organisation_uuid=${partnerOrg}`, { token: partner });
    expect(response.status).toBe(200);
  });

  it('survive concurrent changes: every one of 20 parallel grant additions lands', async () => {
    const created = await createClient({ grants: [] });
    const organisations = Array.from(
      { length: 20 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    await Promise.all(organisations.map((uuid) => addGrant(created.client_id, { organisation_uuid: uuid })));
    const final = await addGrant(created.client_id, { organisation_uuid: DEMO.org });
    expect(new Set(final.map((g) => g.organisation_uuid))).toEqual(new Set([...organisations, DEMO.org]));
  });
});
