import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { logger, sdkClient } from '@svc/core';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import * as z from 'zod';
import { generateKeySet, type KeySet, keySetSchema } from '../domain/signing-keys';

/**
 * onEvent handler of the stack's signing-key custom resource (CDK provider framework).
 *
 * - Create: fills the secret with a fresh key set, unless it already holds a valid one (a
 *   re-created stack must not invalidate the tokens that key signed).
 * - Update: generates a new active key, keeping the previous one for verification, only when
 *   `Rotation` changed; an empty or invalid secret is (re)filled either way.
 * - Delete: nothing; the secret's own removal policy decides its fate.
 *
 * Never returns or logs key material: only the active key id, which is public.
 */
const propertiesSchema = z.object({
  SecretArn: z.string().min(1),
  Rotation: z.string(),
});

export interface ProviderResponse {
  PhysicalResourceId: string;
  Data?: { ActiveKid: string };
}

let client: SecretsManagerClient | undefined;

export async function handler(event: CloudFormationCustomResourceEvent): Promise<ProviderResponse> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const { SecretArn: secretArn, Rotation: rotation } = propertiesSchema.parse(event.ResourceProperties);
  const physicalResourceId = event.RequestType === 'Update' ? event.PhysicalResourceId : `signing-keys:${secretArn}`;
  const rotate =
    event.RequestType === 'Update' &&
    propertiesSchema.safeParse(event.OldResourceProperties).data?.Rotation !== rotation;

  const current = await readKeySet(secretArn);
  if (current && !rotate) {
    logger.info('Signing key set kept', { kid: activeKid(current) });
    return { PhysicalResourceId: physicalResourceId, Data: { ActiveKid: activeKid(current) } };
  }
  const next = await generateKeySet(current);
  await secrets().send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: JSON.stringify(next) }));
  logger.info(rotate ? 'Signing key rotated' : 'Signing key set created', {
    kid: activeKid(next),
    previousKid: current ? activeKid(current) : undefined,
  });
  return { PhysicalResourceId: physicalResourceId, Data: { ActiveKid: activeKid(next) } };
}

/** The secret's key set, or undefined while it holds none (new secret: a placeholder or no value). */
async function readKeySet(secretArn: string): Promise<KeySet | undefined> {
  try {
    const out = await secrets().send(new GetSecretValueCommand({ SecretId: secretArn }));
    return keySetSchema.safeParse(parseJson(out.SecretString)).data;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

function parseJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}

function activeKid(keySet: KeySet): string {
  const [active] = keySet.keys;
  if (!active) throw new Error('Empty signing key set');
  return active.kid;
}

function secrets(): SecretsManagerClient {
  client ??= sdkClient(new SecretsManagerClient({}));
  return client;
}
