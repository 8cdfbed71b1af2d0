import { uuidSchema } from '@svc/core';
import * as z from 'zod';

/**
 * A uuid path or query parameter, lower-cased as every key and grant stores it; anything else in
 * its place is a 404.
 */
export const uuidParam = uuidSchema;

export function uuidParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, uuidParam])) as Record<K, typeof uuidParam>);
}

/** The Simple error shape: the OAuth token route's and every 401's body. */
export const simpleErrorSchema = z.object({ message: z.string() });
