import { createHash } from 'node:crypto';
import {
  ConflictError,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  onOrganisation,
  type Principal,
  parseOrThrow,
  readFor,
  ValidationError,
} from '@svc/core';
import { findSupporter, type Supporter } from '@svc/supporters';
import { createDeclarationInput, type Declaration } from './declaration';
import {
  cancelDeclaration as cancelStored,
  findDeclaration,
  findDeclarationText,
  insertDeclaration,
  keepDeclarationText,
  listDeclarationsOf,
} from './declaration-repository';

type Caller = Principal | Promise<Principal>;

/** A supporter for a caller with any grant on its organisation: 404 before 403, as supporters do. */
function supporterFor(principal: Caller, supporterUuid: string): Promise<Supporter> {
  return readFor(principal, findSupporter(supporterUuid), 'Supporter not found', onOrganisation);
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The hash of the wording: of the text sent (kept for the organisation and version the first
 * time, and then the same text or a 409), else of the text already kept for the version, else none.
 */
async function wordingHash(organisationUuid: string, version: string, text: string | undefined) {
  if (text === undefined) return (await findDeclarationText(organisationUuid, version))?.text_hash;
  const text_hash = sha256(text);
  const kept = await keepDeclarationText({
    organisation_uuid: organisationUuid,
    text_version: version,
    text,
    text_hash,
    created: now(),
  });
  if (kept.text_hash !== text_hash) {
    throw new ConflictError(
      'This text_version is kept with other wording: a version names one wording',
      'error.gift_aid.text_version_taken',
      'text',
    );
  }
  return text_hash;
}

/** Records a declaration the donor made (not in the future), for a caller with a grant on the supporter's organisation. */
export async function createDeclaration(
  principal: Caller,
  supporterUuid: string,
  input: unknown,
): Promise<Declaration> {
  const { text, ...fields } = parseOrThrow(createDeclarationInput, input);
  if (fields.declared_at > now()) {
    throw ValidationError.field(
      'declared_at',
      'error.validation.not_in_future',
      'declared_at may not be in the future',
    );
  }
  const supporter = await supporterFor(principal, supporterUuid);
  const uuid = newResourceUuid('gift_aid_declaration');
  // A re-run of a request that died after storing the declaration answers that declaration.
  const earlier = isResumedRequest() ? await findDeclaration(supporter.uuid, uuid) : undefined;
  if (earlier) return earlier;
  const text_hash = await wordingHash(supporter.organisation_uuid, fields.text_version, text);
  const declaration: Declaration = {
    uuid,
    supporter_uuid: supporter.uuid,
    organisation_uuid: supporter.organisation_uuid,
    ...fields,
    ...(text_hash === undefined ? {} : { text_hash }),
    created: now(),
  };
  await insertDeclaration(declaration);
  return declaration;
}

/** Every declaration of the supporter, cancelled ones included. */
export async function listDeclarations(principal: Caller, supporterUuid: string): Promise<Declaration[]> {
  const supporter = await supporterFor(principal, supporterUuid);
  return listDeclarationsOf(supporter.uuid);
}

/**
 * Cancels a declaration from now (the service clock), keeping it; a second cancellation changes
 * nothing and answers it as it is.
 */
export async function cancelDeclaration(principal: Caller, supporterUuid: string, uuid: string): Promise<Declaration> {
  const supporter = await supporterFor(principal, supporterUuid);
  const cancelled = await cancelStored(supporter.uuid, uuid, now());
  if (!cancelled) throw new NotFoundError('Gift Aid declaration not found');
  return cancelled;
}
