import { byUuid, defineEntity, key, queryAll, type TransactItem, timeKey } from '@svc/table';
import * as z from 'zod';

/**
 * Partner integrations: a partner's access to one organisation (`INTEGRATION` and `PARTNER_LINK`
 * below; docs/access-patterns.md).
 *
 * The link item makes "one active integration per partner and organisation" a conditional put;
 * disabling deletes it, so the organisation can be connected again later.
 */
export const integrationRecordSchema = z.object({
  uuid: z.string(),
  partner_client_id: z.string(),
  partner_name: z.string(),
  onboarding_configuration_uuid: z.string(),
  onboarding_process_uuid: z.string(),
  organisation_uuid: z.string(),
  account_uuids: z.array(z.string()),
  status: z.enum(['active', 'disabled']),
  /** Whether execution added the partner's whole-organisation grant (false: it held one already). */
  grant_added: z.boolean().optional(),
  created: z.number().int(),
  disabled_at: z.number().int().optional(),
  disabled_by: z.string().optional(),
});
export type IntegrationRecord = z.infer<typeof integrationRecordSchema>;

export const INTEGRATION = defineEntity<IntegrationRecord, string>({
  name: 'partner_integration',
  summary: 'A partner’s access to one organisation, made by an onboarding process.',
  prefix: 'PARTNER_INTEGRATION',
  ...byUuid(),
  sort: 'PARTNER_INTEGRATION',
  byKey: 'integration by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'integrations of an organisation',
      shown: 'gsi1pk = ORG#<uuid>#PARTNER_INTEGRATIONS, gsi1sk = <created>#<uuid>',
      keys: (integration) => ({
        partition: organisationIntegrations(integration.organisation_uuid),
        sort: key(timeKey(integration.created), integration.uuid),
      }),
    },
    {
      index: 'gsi2',
      pattern: 'integrations of a partner',
      shown: 'gsi2pk = CLIENT#<client id>#PARTNER_INTEGRATIONS, gsi2sk = <created>#<uuid>',
      keys: (integration) => ({
        partition: partnerIntegrations(integration.partner_client_id),
        sort: key(timeKey(integration.created), integration.uuid),
      }),
    },
  ],
  parse: (item) => integrationRecordSchema.parse(item),
});

const organisationIntegrations = (organisationUuid: string) => key('ORG', organisationUuid, 'PARTNER_INTEGRATIONS');
const partnerIntegrations = (clientId: string) => key('CLIENT', clientId, 'PARTNER_INTEGRATIONS');

const linkSchema = z.object({
  partner_client_id: z.string(),
  organisation_uuid: z.string(),
  integration_uuid: z.string(),
});

/** The one active integration of a partner and an organisation. */
export const PARTNER_LINK = defineEntity<z.infer<typeof linkSchema>, readonly [string, string]>({
  name: 'partner_link',
  summary: 'The one active integration of a partner and an organisation (deleted when it is disabled).',
  prefix: 'PARTNER_LINK',
  idShown: '<client id>#<organisation>',
  sort: 'PARTNER_LINK',
  id: (link) => [link.partner_client_id, link.organisation_uuid] as const,
  idParts: ([clientId, organisationUuid]) => [clientId, organisationUuid],
  byKey: 'the active link partner–organisation',
  storage: {
    toAttributes: ({ integration_uuid }) => ({ integration_uuid }),
    fromAttributes: (item) => {
      const [, partner_client_id, organisation_uuid] = String(item.pk).split('#');
      return { ...item, partner_client_id, organisation_uuid };
    },
  },
  parse: (value) => linkSchema.parse(value),
});

const linkKey = (clientId: string, organisationUuid: string) => PARTNER_LINK.key([clientId, organisationUuid]);
const integrationItem = (integration: IntegrationRecord) => INTEGRATION.item(integration);

/** A new active integration and its link; the link's put fails when the pair is already connected. */
export function newIntegrationWrites(integration: IntegrationRecord): TransactItem[] {
  return [
    { Put: { Item: integrationItem(integration), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        Item: PARTNER_LINK.item({
          partner_client_id: integration.partner_client_id,
          organisation_uuid: integration.organisation_uuid,
          integration_uuid: integration.uuid,
        }),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/** Disables an active integration and frees its link, guarded by it still being active. */
export function disabledIntegrationWrites(integration: IntegrationRecord): TransactItem[] {
  return [
    {
      Put: {
        Item: integrationItem(integration),
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active' },
      },
    },
    {
      Delete: {
        Key: linkKey(integration.partner_client_id, integration.organisation_uuid),
        ConditionExpression: 'integration_uuid = :self',
        ExpressionAttributeValues: { ':self': integration.uuid },
      },
    },
  ];
}

export function findIntegration(uuid: string): Promise<IntegrationRecord | undefined> {
  return INTEGRATION.find(uuid);
}

export async function integrationsOfOrganisation(organisationUuid: string): Promise<IntegrationRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: organisationIntegrations(organisationUuid) });
  return items.map(INTEGRATION.fromItem);
}

export async function integrationsOfPartner(clientId: string): Promise<IntegrationRecord[]> {
  const items = await queryAll({ index: 'gsi2', partition: partnerIntegrations(clientId) });
  return items.map(INTEGRATION.fromItem);
}
