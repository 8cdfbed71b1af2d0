import { z } from 'zod';

/** A uuid path parameter; anything else in its place is a 404 (contract section 3). */
export const uuidParam = z.guid();

export function uuidParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, uuidParam])) as Record<K, typeof uuidParam>);
}
