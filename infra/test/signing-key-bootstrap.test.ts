import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { generateKeySet, keySetSchema } from '@svc/identity';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { handler } from '../../services/identity/src/handlers/signing-key-bootstrap';

/**
 * The custom resource's handler against a Secrets Manager stand-in that speaks the SDK's JSON
 * protocol (found through AWS_ENDPOINT_URL_SECRETS_MANAGER, as every stand-in here is).
 */
const SECRET_ARN = 'arn:aws:secretsmanager:eu-central-2:000000000000:secret:signing-keys-AbCdEf';
const secrets = new Map<string, string>();
let puts = 0;

const requestSchema = z.object({ SecretId: z.string(), SecretString: z.string().optional() });

function fakeSecretsManager(): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const input = requestSchema.parse(JSON.parse(body));
      const reply = (status: number, payload: object) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(payload));
      };
      const stored = secrets.get(input.SecretId);
      if (target === 'secretsmanager.GetSecretValue') {
        if (stored === undefined) {
          reply(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the secret value" });
          return;
        }
        reply(200, { ARN: input.SecretId, SecretString: stored, VersionId: randomUUID() });
        return;
      }
      if (target === 'secretsmanager.PutSecretValue' && input.SecretString !== undefined) {
        puts += 1;
        secrets.set(input.SecretId, input.SecretString);
        reply(200, { ARN: input.SecretId, VersionId: randomUUID() });
        return;
      }
      reply(400, { __type: 'InvalidRequestException', message: `unexpected ${target}` });
    });
  });
}

let server: Server;

beforeAll(async () => {
  server = fakeSecretsManager();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('Stand-in is not listening on TCP');
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  secrets.clear();
  puts = 0;
});

const common = {
  ServiceToken: 'arn:aws:lambda:eu-central-2:000000000000:function:provider',
  ResponseURL: 'https://example.invalid/response',
  StackId: 'arn:aws:cloudformation:eu-central-2:000000000000:stack/svc-fundraising-dev/1',
  LogicalResourceId: 'SigningKeysBootstrapped',
  ResourceType: 'Custom::SigningKeyBootstrap',
};

function properties(rotation: string) {
  return { ServiceToken: common.ServiceToken, SecretArn: SECRET_ARN, Rotation: rotation };
}

function createEvent(rotation = '1'): CloudFormationCustomResourceEvent {
  return { ...common, RequestType: 'Create', RequestId: randomUUID(), ResourceProperties: properties(rotation) };
}

function updateEvent(from: string, to: string): CloudFormationCustomResourceEvent {
  return {
    ...common,
    RequestType: 'Update',
    RequestId: randomUUID(),
    PhysicalResourceId: `signing-keys:${SECRET_ARN}`,
    ResourceProperties: properties(to),
    OldResourceProperties: properties(from),
  };
}

function storedKeySet() {
  return keySetSchema.parse(JSON.parse(secrets.get(SECRET_ARN) ?? 'null'));
}

describe('the signing key bootstrap', () => {
  it('replaces the placeholder of a new secret with a key set, returning only the public key id', async () => {
    secrets.set(SECRET_ARN, 'random-placeholder-from-cloudformation');
    const response = await handler(createEvent());
    const keySet = storedKeySet();
    expect(keySet.keys).toHaveLength(1);
    expect(response).toEqual({
      PhysicalResourceId: `signing-keys:${SECRET_ARN}`,
      Data: { ActiveKid: keySet.keys[0]?.kid },
    });
    expect(JSON.stringify(response)).not.toContain('"d"');
  });

  it('fills a secret that has no value yet', async () => {
    await handler(createEvent());
    expect(storedKeySet().keys).toHaveLength(1);
  });

  it('keeps a valid key set on create, so a re-created stack does not invalidate issued tokens', async () => {
    const existing = JSON.stringify(await generateKeySet());
    secrets.set(SECRET_ARN, existing);
    await handler(createEvent());
    expect(secrets.get(SECRET_ARN)).toBe(existing);
    expect(puts).toBe(0);
  });

  it('rotates when the rotation property changes, keeping the previous key to verify its tokens', async () => {
    const previous = await generateKeySet();
    secrets.set(SECRET_ARN, JSON.stringify(previous));
    const response = await handler(updateEvent('1', '2'));
    const [active, kept] = storedKeySet().keys;
    expect(active?.kid).not.toBe(previous.keys[0]?.kid);
    expect(kept?.kid).toBe(previous.keys[0]?.kid);
    expect(response).toEqual({ PhysicalResourceId: `signing-keys:${SECRET_ARN}`, Data: { ActiveKid: active?.kid } });
  });

  it('leaves the key set alone on an update that does not change the rotation', async () => {
    const existing = JSON.stringify(await generateKeySet());
    secrets.set(SECRET_ARN, existing);
    await handler(updateEvent('1', '1'));
    expect(secrets.get(SECRET_ARN)).toBe(existing);
    expect(puts).toBe(0);
  });

  it('touches nothing on delete: the secret removal policy decides', async () => {
    secrets.set(SECRET_ARN, 'whatever');
    const response = await handler({
      ...common,
      RequestType: 'Delete',
      RequestId: randomUUID(),
      PhysicalResourceId: `signing-keys:${SECRET_ARN}`,
      ResourceProperties: properties('1'),
    });
    expect(response).toEqual({ PhysicalResourceId: `signing-keys:${SECRET_ARN}` });
    expect(secrets.get(SECRET_ARN)).toBe('whatever');
    expect(puts).toBe(0);
  });
});
