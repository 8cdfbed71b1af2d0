import {
  decoyHash,
  type Grant,
  hashSecret,
  newToken,
  now,
  type Principal,
  type Role,
  UnauthorizedError,
  verifySecret,
} from '@svc/core';
import {
  findCallingClient,
  findClient,
  type PartnerProfile,
  saveClientCredentials,
  updateGrants,
} from '../repository/client-repository';

export interface ClientInput {
  client_id: string;
  client_secret: string;
  role?: Role;
  grants?: Grant[];
  partner?: PartnerProfile;
}

/**
 * Creates or updates a client; the secret is kept only as a slow salted hash. Grants given here
 * replace the client's grants (through the same guarded update as every grant change); without
 * them the client keeps the grants it has.
 */
export async function upsertClient(input: ClientInput): Promise<void> {
  await saveClientCredentials({
    client_id: input.client_id,
    secret_hash: await hashSecret(input.client_secret),
    role: input.role ?? 'customer',
    kind: input.partner ? 'partner' : 'client',
    created: now(),
    ...(input.partner ? { partner: input.partner } : {}),
  });
  const grants = input.grants;
  if (grants) await updateGrants(input.client_id, () => grants);
}

/** Issues new credentials; the secret is returned once and never stored in clear. */
export async function createClient(input: Omit<ClientInput, 'client_id' | 'client_secret'> & { client_id?: string }) {
  const clientId = input.client_id ?? `client_${newToken(12)}`;
  const clientSecret = `secret_${newToken(32)}`;
  await upsertClient({ ...input, client_id: clientId, client_secret: clientSecret });
  return { client_id: clientId, client_secret: clientSecret };
}

/** Checks client credentials in constant time; unknown clients cost the same as wrong secrets. */
export async function authenticateClient(clientId: string, clientSecret: string): Promise<string> {
  const client = await findClient(clientId);
  const matches = await verifySecret(clientSecret, client?.secret_hash ?? (await decoyHash()));
  if (!client || !matches) throw new UnauthorizedError('Invalid client credentials');
  return client.client_id;
}

export async function loadPrincipal(clientId: string): Promise<Principal> {
  const client = await findCallingClient(clientId);
  if (!client) throw new UnauthorizedError('The client of this token no longer exists');
  return { clientId: client.client_id, role: client.role, kind: client.kind, grants: client.grants };
}

export function addGrant(clientId: string, grant: Grant): Promise<Grant[]> {
  return updateGrants(clientId, (grants) =>
    grants.some((g) => g.organisation_uuid === grant.organisation_uuid && g.account_uuid === grant.account_uuid)
      ? grants
      : [...grants, grant],
  );
}

export function removeOrganisationGrants(clientId: string, organisationUuid: string): Promise<Grant[]> {
  return updateGrants(clientId, (grants) => grants.filter((g) => g.organisation_uuid !== organisationUuid));
}
