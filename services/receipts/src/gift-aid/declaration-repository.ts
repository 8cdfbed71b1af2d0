import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '@svc/core';
import { db, defineEntity, isConditionFailure, key, queryAll, tableName, transactWrite } from '@svc/table';
import * as z from 'zod';
import { type Declaration, declarationSchema } from './declaration';

/**
 * Gift Aid's items:
 *
 * | pattern | key |
 * | --- | --- |
 * | a supporter's declarations (the list, and each claim's check) | `pk = GIFT_AID_DECLARATION#<supporter uuid>`, `sk = DECLARATION#<uuid>` |
 * | the wording of a declaration text version of an organisation | `pk = GIFT_AID_TEXT#<organisation uuid>`, `sk = VERSION#<text version>` |
 *
 * A supporter's declarations share a partition: a claim reads each donor's in one Query, and a
 * declaration is found by its supporter and uuid together (the path names both). Neither item
 * carries events. A declaration is never deleted: a cancellation sets `cancelled_at`, once.
 */
export const GIFT_AID_DECLARATION = defineEntity<Declaration, readonly [string, string]>({
  name: 'gift_aid_declaration',
  summary: 'A supporter’s Gift Aid declaration: scope, wording version and hash, time, channel; cancelled ones kept.',
  prefix: 'GIFT_AID_DECLARATION',
  idShown: '<supporter uuid>',
  sort: ([, uuid]) => key('DECLARATION', uuid),
  sortShown: 'DECLARATION#<uuid>',
  id: (declaration) => [declaration.supporter_uuid, declaration.uuid] as const,
  idParts: ([supporterUuid]) => [supporterUuid],
  byKey: 'a supporter’s Gift Aid declarations (one partition per supporter)',
  parse: (value) => declarationSchema.parse(value),
});

export const declarationTextSchema = z.object({
  organisation_uuid: z.string(),
  text_version: z.string(),
  text: z.string(),
  /** SHA-256 of the text's UTF-8 bytes, hex. */
  text_hash: z.string(),
  created: z.number().int(),
});
export type DeclarationText = z.infer<typeof declarationTextSchema>;

/**
 * The wording behind a text version, kept once per organisation: HMRC may ask to see what a
 * donor declared, and a declaration keeps only its version and the wording's hash.
 */
export const GIFT_AID_TEXT = defineEntity<DeclarationText, readonly [string, string]>({
  name: 'gift_aid_text',
  summary: 'The wording of a Gift Aid declaration text version of an organisation, with its SHA-256.',
  prefix: 'GIFT_AID_TEXT',
  idShown: '<organisation uuid>',
  sort: ([, version]) => key('VERSION', version),
  sortShown: 'VERSION#<text version>',
  id: (text) => [text.organisation_uuid, text.text_version] as const,
  idParts: ([organisationUuid]) => [organisationUuid],
  byKey: 'the wording of a declaration text version',
  parse: (value) => declarationTextSchema.parse(value),
});

const declarationsOf = (supporterUuid: string) => key('GIFT_AID_DECLARATION', supporterUuid);

/** A supporter's declarations, oldest declared first (strongly consistent). */
export async function listDeclarationsOf(supporterUuid: string): Promise<Declaration[]> {
  const items = await queryAll({ partition: declarationsOf(supporterUuid), consistent: true });
  return items
    .map((item) => GIFT_AID_DECLARATION.fromItem(item))
    .sort((a, b) => a.declared_at - b.declared_at || a.created - b.created || a.uuid.localeCompare(b.uuid));
}

export function findDeclaration(supporterUuid: string, uuid: string): Promise<Declaration | undefined> {
  return GIFT_AID_DECLARATION.find([supporterUuid, uuid]);
}

export async function insertDeclaration(declaration: Declaration): Promise<void> {
  await transactWrite([
    GIFT_AID_DECLARATION.create(declaration, () => new ConflictError('A declaration with this uuid already exists')),
  ]);
}

export function findDeclarationText(organisationUuid: string, version: string): Promise<DeclarationText | undefined> {
  return GIFT_AID_TEXT.find([organisationUuid, version]);
}

/**
 * Keeps a version's wording, unless one is kept already: answers the kept one either way (the
 * caller compares hashes; a version never changes its wording).
 */
export async function keepDeclarationText(text: DeclarationText): Promise<DeclarationText> {
  try {
    await transactWrite([GIFT_AID_TEXT.create(text, () => new TextTaken())]);
    return text;
  } catch (error) {
    if (!(error instanceof TextTaken)) throw error;
    const kept = await findDeclarationText(text.organisation_uuid, text.text_version);
    if (!kept) throw error;
    return kept;
  }
}

class TextTaken extends Error {}

/**
 * Sets `cancelled_at`, only on a declaration not cancelled yet. Answers the declaration as it is
 * after the call (a second cancellation leaves the first date), or undefined when it does not exist.
 */
export async function cancelDeclaration(
  supporterUuid: string,
  uuid: string,
  at: number,
): Promise<Declaration | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: GIFT_AID_DECLARATION.key([supporterUuid, uuid]),
        UpdateExpression: 'SET cancelled_at = :at',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(cancelled_at)',
        ExpressionAttributeValues: { ':at': at },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return GIFT_AID_DECLARATION.fromItem(out.Attributes ?? {});
  } catch (error) {
    if (isConditionFailure(error)) return findDeclaration(supporterUuid, uuid);
    throw error;
  }
}
