import { type Supporter, supporterSchema } from './supporter';

/** The response schema of every supporter route: the record's own schema. */
export const supporterResponse = supporterSchema;

/**
 * A supporter as the API shows it: identity first, then the fields in the API's order. Unset fields
 * are omitted, never null; anything stored beside the record (keys, entity) stays behind.
 */
export function supporterShape(s: Supporter): Supporter {
  return supporterResponse.parse(s);
}
