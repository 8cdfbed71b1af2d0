import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { uuidSchema } from '@svc/core';
import { db, getItem, key, tableName } from '@svc/table';
import * as z from 'zod';

/**
 * Reconciliation source configurations (one per organisation and file type).
 *
 * | pattern                          | index | key                                               |
 * |----------------------------------|-------|---------------------------------------------------|
 * | configuration by uuid            | table | pk = RECON_SOURCE#<uuid>, sk = RECON_SOURCE       |
 * | configurations of an organisation| gsi1  | gsi1pk = ORG#<uuid>, gsi1sk = RECON_SOURCE#<uuid> |
 */
export const sourceConfigurationSchema = z.object({
  uuid: uuidSchema,
  organisation_uuid: uuidSchema,
  name: z.string().min(1),
  file_type: z.enum(['camt054', 'csv']),
});
export type SourceConfiguration = z.infer<typeof sourceConfigurationSchema>;

const configurationKey = (uuid: string) => ({ pk: key('RECON_SOURCE', uuid), sk: 'RECON_SOURCE' });

export async function saveSourceConfiguration(configuration: SourceConfiguration): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...configurationKey(configuration.uuid),
        entity: 'reconciliation_source_configuration',
        gsi1pk: key('ORG', configuration.organisation_uuid),
        gsi1sk: key('RECON_SOURCE', configuration.uuid),
        ...configuration,
      },
    }),
  );
}

export async function findSourceConfiguration(uuid: string): Promise<SourceConfiguration | undefined> {
  const item = await getItem(configurationKey(uuid));
  return item ? sourceConfigurationSchema.parse(item) : undefined;
}
