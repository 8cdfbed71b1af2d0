import * as z from 'zod';

/** A uuid in any case, lower-cased as every key and grant stores it. */
export const uuidSchema = z.guid().transform((value) => value.toLowerCase());
