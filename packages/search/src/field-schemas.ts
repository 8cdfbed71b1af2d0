import * as z from 'zod';
import { fieldPathProblem } from './field-path';

/** A dotted field path, checked by the same rule the query parser applies. */
export const fieldPathSchema = z.string().superRefine((value, ctx) => {
  const problem = fieldPathProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** How sorts and aggregations read a field's values. */
export const fieldTypeSchema = z.enum(['string', 'numeric', 'boolean']);
export type FieldType = z.infer<typeof fieldTypeSchema>;
