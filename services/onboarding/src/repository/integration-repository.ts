import { getItem, key, queryAll, type TransactItem, timeKey } from '@svc/table';
import * as z from 'zod';

/**
 * Partner integrations: a partner's access to one organisation.
 *
 * | pattern                               | index | key                                                        |
 * |---------------------------------------|-------|------------------------------------------------------------|
 * | integration by uuid                   | table | pk = PARTNER_INTEGRATION#<uuid>, sk = PARTNER_INTEGRATION  |
 * | integrations of an organisation       | gsi1  | gsi1pk = ORG#<uuid>#PARTNER_INTEGRATIONS, gsi1sk = <created>#<uuid> |
 * | integrations of a partner             | gsi2  | gsi2pk = CLIENT#<client id>#PARTNER_INTEGRATIONS, gsi2sk = <created>#<uuid> |
 * | the active link partner–organisation  | table | pk = PARTNER_LINK#<client id>#<organisation>, sk = PARTNER_LINK |
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

const integrationKey = (uuid: string) => ({ pk: key('PARTNER_INTEGRATION', uuid), sk: 'PARTNER_INTEGRATION' });
const linkKey = (clientId: string, organisationUuid: string) => ({
  pk: key('PARTNER_LINK', clientId, organisationUuid),
  sk: 'PARTNER_LINK',
});

function integrationItem(integration: IntegrationRecord) {
  return {
    ...integrationKey(integration.uuid),
    entity: 'partner_integration',
    gsi1pk: key('ORG', integration.organisation_uuid, 'PARTNER_INTEGRATIONS'),
    gsi1sk: key(timeKey(integration.created), integration.uuid),
    gsi2pk: key('CLIENT', integration.partner_client_id, 'PARTNER_INTEGRATIONS'),
    gsi2sk: key(timeKey(integration.created), integration.uuid),
    ...integration,
  };
}

/** A new active integration and its link; the link's put fails when the pair is already connected. */
export function newIntegrationWrites(integration: IntegrationRecord): TransactItem[] {
  return [
    { Put: { Item: integrationItem(integration), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        Item: {
          ...linkKey(integration.partner_client_id, integration.organisation_uuid),
          entity: 'partner_link',
          integration_uuid: integration.uuid,
        },
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

export async function findIntegration(uuid: string): Promise<IntegrationRecord | undefined> {
  const item = await getItem(integrationKey(uuid));
  return item ? integrationRecordSchema.parse(item) : undefined;
}

export async function integrationsOfOrganisation(organisationUuid: string): Promise<IntegrationRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: key('ORG', organisationUuid, 'PARTNER_INTEGRATIONS') });
  return items.map((item) => integrationRecordSchema.parse(item));
}

export async function integrationsOfPartner(clientId: string): Promise<IntegrationRecord[]> {
  const items = await queryAll({ index: 'gsi2', partition: key('CLIENT', clientId, 'PARTNER_INTEGRATIONS') });
  return items.map((item) => integrationRecordSchema.parse(item));
}
