import { splitFieldPath } from '../field-path';
import type { Scalar } from '../query';

/**
 * A field path as an SQL/JSON path over the stored document. Lax mode and `[*]` after every
 * step reach what the language's paths reach: each element of an array on the way, never the
 * array itself, arrays nested as deep as free JSON may be (16 levels). Keys are JSON string
 * literals, so any key is safe, and the whole path travels as a bound parameter.
 */
const FLATTEN = '[*]'.repeat(16);

export function jsonPath(field: string, filter?: string): string {
  const steps = splitFieldPath(field)
    .map((segment) => `.${JSON.stringify(storableText(segment))}${FLATTEN}`)
    .join('');
  return `lax $${steps}${filter === undefined ? '' : ` ? (${filter})`}`;
}

/** A query value as a jsonpath literal (JSON's own spelling for strings and numbers). */
export function jsonPathLiteral(value: Scalar): string {
  if (typeof value === 'string') return JSON.stringify(storableText(value));
  if (typeof value === 'number') return numberText(value);
  return value ? 'true' : 'false';
}

/** A finite number as PostgreSQL reads `numeric` (exponent spelled without `+`). */
export function numberText(value: number): string {
  return String(value + 0).replace('e+', 'e');
}

/**
 * PostgreSQL text cannot hold U+0000: the projection stores it as U+FFFD, and query values and
 * keys are mapped the same way, so they still compare as they did.
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** A document as the engine stores it: every key and string through `storableText`. */
export function storableDocument(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableDocument);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [storableText(key), storableDocument(inner)]),
    );
  }
  return value;
}
