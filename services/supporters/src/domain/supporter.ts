import * as z from 'zod';

/**
 * A supporter's free-text fields, in the API's order, with the longest value each takes
 * (the interface leaves field lengths open; these fit any real name, address or phone number).
 */
export const TEXT_FIELD_LIMITS = {
  raw: 2000,
  raw_name: 500,
  legal_entity: 255,
  honorific_prefix: 50,
  salutation: 50,
  first_name: 100,
  middle_name: 100,
  last_name: 100,
  care_of: 200,
  raw_address: 1000,
  street: 200,
  house_number: 50,
  address_addendum: 200,
  post_office_box: 50,
  postal_code: 20,
  city: 100,
  region_level_1: 100,
  region_level_2: 100,
  country: 100,
  email: 254,
  phone: 50,
  birth_day: 10,
  birth_month: 10,
  birth_year: 10,
  locale: 35,
} as const;
export type TextField = keyof typeof TEXT_FIELD_LIMITS;

/** One schema per text field, built by `make` from the field's length limit. */
export function textFieldShape<S extends z.ZodType>(make: (maxLength: number) => S) {
  // Object.fromEntries cannot keep the key names in its type; every key of the limits is mapped.
  return Object.fromEntries(Object.entries(TEXT_FIELD_LIMITS).map(([field, max]) => [field, make(max)])) as Record<
    TextField,
    S
  >;
}

/**
 * A supporter as stored and as answered. Unset fields are absent, never null or empty:
 * the inputs turn null, "" and {} into "unset" before anything is written.
 * `email_permission` comes from the payment request's `supporter` object:
 * whether the donor agreed to be contacted by e-mail.
 */
export const supporterSchema = z.object({
  uuid: z.string(),
  organisation_uuid: z.string(),
  created: z.number().int().meta({ description: 'Unix seconds' }),
  ...textFieldShape(() => z.string().optional()),
  email_permission: z.boolean().optional(),
  custom_parameters: z.record(z.string(), z.string()).optional().meta({ description: 'Flat key/value pairs' }),
  svc_parameters: z
    .record(z.string(), z.json())
    .optional()
    .meta({ description: "Nested object for the service's own use, e.g. fundraising_automation.crm_id" }),
});
export type Supporter = z.infer<typeof supporterSchema>;

/** Everything a caller may set: the record without its identity. */
export const supporterFieldsSchema = supporterSchema.omit({ uuid: true, organisation_uuid: true, created: true });
export type SupporterFields = z.infer<typeof supporterFieldsSchema>;

export const supporterFieldName = supporterFieldsSchema.keyof();
export type SupporterField = z.infer<typeof supporterFieldName>;

/** List sorting takes any top-level field of the record. */
export const sortableField = supporterSchema.keyof();
export type SortableField = z.infer<typeof sortableField>;
