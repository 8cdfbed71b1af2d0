import { createHash } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import { isWellFormedText, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '@svc/core';
import type { StackEvent, StackResult } from '../context';

export const MAX_BODY_BYTES = 256 * 1024;
/** No request needs more; free-JSON fields keep to 16 levels of their own (@svc/core free-json). */
export const MAX_JSON_DEPTH = 64;

/**
 * Nesting of a parsed JSON value, and whether all its text (keys too) is well-formed Unicode;
 * walked with its own stack, so any depth is safe to measure.
 */
export function jsonShape(value: unknown): { depth: number; wellFormed: boolean } {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node === 'string') {
      if (!isWellFormedText(node)) return { depth: deepest, wellFormed: false };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return { depth: deepest, wellFormed: true };
    for (const [key, child] of Object.entries(node)) {
      if (!isWellFormedText(key)) return { depth: deepest, wellFormed: false };
      stack.push([child, depth + 1]);
    }
  }
  return { depth: deepest, wellFormed: true };
}

/**
 * Reads the raw body once (API Gateway may base64 it), enforces the size limit, and parses
 * JSON or form bodies as the route accepts (multipart bodies are handed on as bytes). Malformed JSON is a 400; an unknown type a 415.
 * Routes that take no body ignore whatever was sent within the limit. JSON nested deeper than
 * MAX_JSON_DEPTH is a 400 before any schema walks it.
 */
export function bodyParser(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: async (request) => {
      const { event } = request;
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      // Every route answers 413 over the limit, also one that takes no body (it would be ignored);
      // an unknown path (the fallback) stays a 404 whatever comes with it.
      const limit = event.svc.route.maxBodyBytes ?? MAX_BODY_BYTES;
      if (bytes.length > limit && event.svc.route.path !== '$default') throw new PayloadTooLargeError(limit);
      if (!event.svc.route.body) return;
      const accepts = event.svc.route.accepts ?? ['json'];
      const contentType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (accepts.includes('multipart') && contentType === 'multipart/form-data') {
        const form = await readForm(bytes, event.headers['content-type'] ?? '');
        event.svc.parsedBody = { contentType: event.headers['content-type'] ?? '', bytes, form };
        // What an idempotency key's fingerprint covers: the parts, not the boundary (a client picks
        // a new one for every request, also for a retry of the same files).
        event.svc.rawBody = await formFingerprint(form);
        return;
      }
      const text = bytes.toString('utf8');
      event.svc.rawBody = text;
      if (text.trim() === '') {
        event.svc.parsedBody = undefined;
        return;
      }
      if (accepts.includes('form') && contentType === 'application/x-www-form-urlencoded') {
        event.svc.parsedBody = Object.fromEntries(new URLSearchParams(text));
        return;
      }
      const isJson = contentType === '' || contentType === 'application/json' || contentType.endsWith('+json');
      if (!isJson || !accepts.includes('json')) throw new UnsupportedMediaTypeError(contentType);
      try {
        event.svc.parsedBody = JSON.parse(text);
      } catch {
        throw ValidationError.field('body', 'error.request.malformed_json', 'The request body is not valid JSON');
      }
      const shape = jsonShape(event.svc.parsedBody);
      if (shape.depth > MAX_JSON_DEPTH) {
        throw ValidationError.field(
          'body',
          'error.request.too_deep',
          `The request body nests more than ${MAX_JSON_DEPTH} levels`,
        );
      }
      if (!shape.wellFormed) {
        throw ValidationError.field(
          'body',
          'error.request.malformed_unicode',
          'The request body holds text that is not well-formed Unicode (a lone surrogate)',
        );
      }
    },
  };
}

async function readForm(bytes: Buffer, contentType: string): Promise<FormData> {
  try {
    return await new Response(new Uint8Array(bytes), { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw ValidationError.field('body', 'error.request.malformed_multipart', 'The multipart body cannot be read');
  }
}

/** Each part's name with its value, or its file name, type and content hash. */
async function formFingerprint(form: FormData): Promise<string> {
  const parts: string[][] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      parts.push([name, value]);
      continue;
    }
    const file = value as unknown as { name: string; type: string; arrayBuffer(): Promise<ArrayBuffer> };
    const digest = createHash('sha256')
      .update(new Uint8Array(await file.arrayBuffer()))
      .digest('hex');
    parts.push([name, file.name, file.type, digest]);
  }
  return JSON.stringify(parts);
}
