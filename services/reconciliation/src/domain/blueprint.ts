import {
  assertWholeOrganisationGrant,
  NotFoundError,
  newResourceUuid,
  type Principal,
  ValidationError,
} from '@svc/core';
import { findSourceConfiguration } from '../repository/source-configuration-repository';
import { bucketName, uploadPrefix, writeObject } from '../storage/objects';
import { reportUuidOf } from './report-id';

/** The deprecated blueprint execution: the date after which it is gone (the `Sunset` header). */
export const BLUEPRINT_SUNSET = 'Wed, 30 Jun 2027 00:00:00 GMT';
/** At most this many bytes per request (API Gateway and Lambda limits leave room for ~4.5 MiB). */
export const BLUEPRINT_MAX_BYTES = 4 * 1024 * 1024;
export const BLUEPRINT_MAX_FILES = 20;

/** A file part of the form (the runtime's `File`). */
interface UploadedFile {
  name: string;
  size: number;
  type: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A file name as a key segment: no folders, no control characters, no lone surrogates, at most
 * 120 characters (counted by code point, so a name is never cut inside a character).
 */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const isControl = (character: string) => {
    const code = character.codePointAt(0) ?? 0;
    return code <= 0x1f || code === 0x7f;
  };
  const cleaned = [...base.replace(LONE_SURROGATE, '')]
    .filter((character) => !isControl(character))
    .join('')
    .trim();
  const short = [...cleaned].slice(0, 120).join('');
  return short === '' || short === '.' || short === '..' ? 'upload' : short;
}

/**
 * Executes a reconciliation blueprint (deprecated; contract: a source configuration's uuid is
 * also its blueprint's uuid): each file of `filename[]` is stored like a presigned upload, under
 * the configuration's prefix, and processed from its object-created notification like one. The
 * answer names each stored file and the uuid its report will have.
 */
export async function executeBlueprint(principal: Promise<Principal>, blueprintUuid: string, form: FormData) {
  const [caller, configuration] = await Promise.all([principal, findSourceConfiguration(blueprintUuid)]);
  if (!configuration) throw new NotFoundError('Reconciliation blueprint not found');
  assertWholeOrganisationGrant(caller, configuration.organisation_uuid);
  const files = [...form.getAll('filename[]'), ...form.getAll('filename')].flatMap((value) =>
    typeof value === 'string' ? [] : [value as unknown as UploadedFile],
  );
  if (files.length === 0) {
    throw ValidationError.field('filename[]', 'error.validation.not_blank', 'Send one or more files in filename[]');
  }
  if (files.length > BLUEPRINT_MAX_FILES) {
    throw ValidationError.field(
      'filename[]',
      'error.validation.too_big',
      `At most ${BLUEPRINT_MAX_FILES} files per request`,
    );
  }
  const empty = files.find((file) => file.size === 0);
  if (empty)
    throw ValidationError.field('filename[]', 'error.validation.not_valid', `${empty.name || 'A file'} is empty`);
  const prefix = `${uploadPrefix(configuration.organisation_uuid, configuration.uuid)}${newResourceUuid('blueprint_upload')}/`;
  const bucket = bucketName();
  return Promise.all(
    files.map(async (file, index) => {
      // A folder per file keeps the name as sent (and two files of one name apart).
      const key = `${prefix}${index + 1}/${safeFileName(file.name)}`;
      const stored = await writeObject(
        key,
        Buffer.from(await file.arrayBuffer()),
        file.type || 'application/octet-stream',
      );
      // The report S3's notification of this very version makes (versioned bucket: its id).
      const reportUuid = reportUuidOf(bucket, key, stored.etag, stored.versionId);
      return { key, name: file.name, size: file.size, report_uuid: reportUuid };
    }),
  );
}
