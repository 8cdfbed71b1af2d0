import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { uuidSchema } from '@svc/core';
import { byUuid, db, defineEntity, key, tableName } from '@svc/table';
import * as z from 'zod';

export const sourceConfigurationSchema = z.object({
  uuid: uuidSchema,
  organisation_uuid: uuidSchema,
  name: z.string().min(1),
  file_type: z.enum(['camt054', 'csv']),
});
export type SourceConfiguration = z.infer<typeof sourceConfigurationSchema>;

/** Reconciliation source configurations (one per organisation and file type). */
export const SOURCE_CONFIGURATION = defineEntity<SourceConfiguration, string>({
  name: 'reconciliation_source_configuration',
  summary: 'Where an organisation’s bank files come from and what kind they are (camt.054, CSV).',
  prefix: 'RECON_SOURCE',
  ...byUuid(),
  sort: 'RECON_SOURCE',
  byKey: 'configuration by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'configurations of an organisation',
      shown: 'gsi1pk = ORG#<organisation uuid>, gsi1sk = RECON_SOURCE#<uuid>',
      keys: (configuration) => ({
        partition: key('ORG', configuration.organisation_uuid),
        sort: key('RECON_SOURCE', configuration.uuid),
      }),
    },
  ],
  parse: (item) => sourceConfigurationSchema.parse(item),
});

export async function saveSourceConfiguration(configuration: SourceConfiguration): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: SOURCE_CONFIGURATION.item(configuration),
    }),
  );
}

export function findSourceConfiguration(uuid: string): Promise<SourceConfiguration | undefined> {
  return SOURCE_CONFIGURATION.find(uuid);
}
