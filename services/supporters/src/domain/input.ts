import { deferred, flatStringObject, freeJsonObject, uuidSchema } from '@svc/core';
import * as z from 'zod';
import {
  type SupporterField,
  type SupporterFields,
  supporterFieldName,
  supporterFieldsSchema,
  TEXT_FIELD_LIMITS,
  textFieldShape,
} from './supporter';

/**
 * What callers may send for a supporter. In every input `null`, `""` and `{}` mean "unset": on
 * create the field is left out, on update it is removed. Nothing blank is ever stored, so
 * responses can omit unset fields instead of showing nulls.
 */

const MAX_PARAMETERS = 100;

/**
 * The fields' schemas, built when a schema below is first used (they are `deferred`: a function
 * serving other requests never builds them).
 */
function fieldInputShape() {
  const email = z.union([z.literal(''), z.email().max(TEXT_FIELD_LIMITS.email)]);
  /** Flat key/value pairs, string values only. */
  const customParameters = flatStringObject({ maxKeys: MAX_PARAMETERS, maxKeyLength: 100, maxValueLength: 1000 });
  /**
   * A nested object for the service's own use, e.g. `fundraising_automation.crm_id`:
   * free JSON within the limits every such field keeps (@svc/core free-json).
   */
  const svcParameters = freeJsonObject({ maxKeyLength: 100 });
  return {
    ...textFieldShape((max) => z.string().max(max).nullable().optional()),
    email: email.nullable().optional(),
    email_permission: z.boolean().nullable().optional(),
    custom_parameters: customParameters.nullable().optional(),
    svc_parameters: svcParameters.nullable().optional(),
  };
}

/** Create Supporter: the fields of 2.9 with `organisation_uuid` required. */
export const createSupporterInput = deferred(() =>
  z
    .object({
      organisation_uuid: uuidSchema.meta({ description: 'The organisation the supporter belongs to' }),
      ...fieldInputShape(),
    })
    .strict(),
);
export type CreateSupporterInput = z.infer<typeof createSupporterInput>;

const UNCHANGEABLE = 'A supporter stays with its organisation: organisation_uuid cannot be changed';

/** Update Supporter: any subset of the fields; `organisation_uuid` is named and refused. */
export const updateSupporterInput = deferred(() =>
  z
    .object({
      organisation_uuid: z
        .unknown()
        .refine(() => false, UNCHANGEABLE)
        .optional()
        .meta({ description: `Refused. ${UNCHANGEABLE}.` }),
      ...fieldInputShape(),
    })
    .strict(),
);
export type UpdateSupporterInput = z.infer<typeof updateSupporterInput>;

/**
 * The `supporter` object of a payment request. Its `uuid` names an existing
 * supporter for the payments domain; a supporter built from this object always gets a new uuid.
 */
export const paymentSupporterInput = deferred(() =>
  z
    .object(fieldInputShape())
    .pick({
      salutation: true,
      first_name: true,
      last_name: true,
      street: true,
      house_number: true,
      address_addendum: true,
      postal_code: true,
      city: true,
      country: true,
      email: true,
      email_permission: true,
      custom_parameters: true,
    })
    .extend({ uuid: uuidSchema.nullable().optional() })
    .strict(),
);
export type PaymentSupporterInput = z.infer<typeof paymentSupporterInput>;

export interface FieldChanges {
  set: SupporterFields;
  remove: SupporterField[];
}

function isBlank(value: unknown): boolean {
  if (value === null || value === '') return true;
  return typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** Splits validated input into the fields to store and the fields to remove (sent blank). */
export function fieldChanges(input: Readonly<Record<string, unknown>>): FieldChanges {
  const given = Object.entries(input).filter(
    ([field, value]) => value !== undefined && supporterFieldName.safeParse(field).success,
  );
  return {
    set: supporterFieldsSchema.parse(Object.fromEntries(given.filter(([, value]) => !isBlank(value)))),
    remove: given.filter(([, value]) => isBlank(value)).map(([field]) => supporterFieldName.parse(field)),
  };
}
