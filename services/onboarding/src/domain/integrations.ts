import { allowedIf, coversAccount, ForbiddenError, now, type Principal, readFor, touchesOrganisation } from '@svc/core';
import { findClient, grantsChangeWrite } from '@svc/identity';
import { findAccount } from '@svc/organisations';
import { type GuardedWrite, retryOnConflict, transactWrite, versioned } from '@svc/table';
import {
  disabledIntegrationWrites,
  findIntegration,
  type IntegrationRecord,
  integrationsOfOrganisation,
  integrationsOfPartner,
} from '../repository/integration-repository';

export interface IntegrationFilters {
  organisation_uuid?: string | undefined;
  account_uuid?: string | undefined;
  configuration_uuid?: string | undefined;
}

/**
 * Who sees an integration: the partner that owns it (also after it was disabled), and the
 * organisation's own clients (any grant on it). A partner sees only its own: its grant on an
 * organisation comes from its own integration and says nothing about other partners'.
 */
function visibleTo(caller: Principal, integration: IntegrationRecord): boolean {
  if (caller.kind === 'partner') return integration.partner_client_id === caller.clientId;
  return touchesOrganisation(caller, integration.organisation_uuid);
}

/**
 * List Partner Integrations with its filters. Filtering on an organisation needs a grant on it
 * (403); without that filter the list holds the caller's own integrations
 * (a partner) and those of every organisation its grants touch.
 */
export async function listIntegrations(principal: Promise<Principal>, filters: IntegrationFilters) {
  const caller = await principal;
  if (filters.account_uuid) {
    const account = await findAccount(filters.account_uuid);
    if (!account || !coversAccount(caller, account.organisation_uuid, account.uuid)) {
      throw new ForbiddenError('You have no grant on this account');
    }
  }
  let candidates: IntegrationRecord[];
  if (filters.organisation_uuid) {
    if (!touchesOrganisation(caller, filters.organisation_uuid)) {
      throw new ForbiddenError('You have no grant on this organisation');
    }
    candidates = await integrationsOfOrganisation(filters.organisation_uuid);
  } else {
    const organisations = [...new Set(caller.grants.map((g) => g.organisation_uuid))];
    const found = await Promise.all([
      integrationsOfPartner(caller.clientId),
      ...organisations.map((uuid) => integrationsOfOrganisation(uuid)),
    ]);
    candidates = [...new Map(found.flat().map((i) => [i.uuid, i])).values()];
  }
  return candidates
    .filter((i) => visibleTo(caller, i))
    .filter((i) => !filters.account_uuid || i.account_uuids.includes(filters.account_uuid))
    .filter((i) => !filters.configuration_uuid || i.onboarding_configuration_uuid === filters.configuration_uuid)
    .sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid));
}

/**
 * Disconnect: the integration is disabled and the partner loses the grant it gave on the
 * organisation, in one transaction (403 from the next request on). The partner may always disconnect; the
 * organisation's own clients (a whole-organisation grant) only when the partner registered
 * `allow_self_disconnect`, and otherwise are pointed to the partner's support address.
 * Disabling a disabled integration changes nothing and answers it again.
 */
export async function disableIntegration(principal: Promise<Principal>, uuid: string): Promise<IntegrationRecord> {
  const caller = await principal;
  return retryOnConflict(async () => {
    const integration = await readFor(
      caller,
      findIntegration(uuid),
      'Partner integration not found',
      allowedIf(visibleTo),
    );
    const partner = await findClient(integration.partner_client_id);
    if (integration.partner_client_id !== caller.clientId) {
      // The organisation's own client: a whole-organisation grant, and no partner (a partner's
      // grant comes from its own integration, not from the organisation).
      const organisationClient =
        caller.kind !== 'partner' &&
        caller.grants.some(
          (g) => g.organisation_uuid === integration.organisation_uuid && g.account_uuid === undefined,
        );
      if (!organisationClient) throw new ForbiddenError('Only the partner or the whole organisation can disconnect');
      if (!partner?.partner?.allow_self_disconnect) {
        const support = partner?.partner?.support_url;
        throw new ForbiddenError(
          `${partner?.partner?.name ?? 'The partner'} does not allow disconnecting here${support ? `; ask at ${support}` : ''}`,
        );
      }
    }
    if (integration.status === 'disabled') return integration;
    const disabled: IntegrationRecord = {
      ...integration,
      status: 'disabled',
      disabled_at: now(),
      disabled_by: caller.clientId,
    };
    const writes: GuardedWrite[] = disabledIntegrationWrites(disabled).map(versioned);
    // Only the grant the integration added goes; one the partner held before (seed, operator) stays.
    if (integration.grant_added !== false) {
      const grants = await grantsChangeWrite(integration.partner_client_id, (current) =>
        current.filter((g) => !(g.organisation_uuid === integration.organisation_uuid && g.account_uuid === undefined)),
      );
      writes.push(versioned(grants.item));
    }
    await transactWrite(writes);
    return disabled;
  });
}
