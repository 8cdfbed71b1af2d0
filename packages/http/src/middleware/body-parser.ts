import type { MiddlewareObj } from '@middy/core';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '@svc/core';
import type { StackEvent, StackResult } from '../context';

export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Reads the raw body once (API Gateway may base64 it), enforces the size limit, and parses
 * JSON or form bodies as the route accepts (multipart bodies are handed on as bytes). Malformed JSON is a 400; an unknown type a 415.
 * Routes that take no body ignore whatever was sent.
 */
export function bodyParser(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: (request) => {
      const { event } = request;
      if (!event.svc.route.body) return;
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      const limit = event.svc.route.maxBodyBytes ?? MAX_BODY_BYTES;
      if (bytes.length > limit) throw new PayloadTooLargeError(limit);
      const accepts = event.svc.route.accepts ?? ['json'];
      const contentType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (accepts.includes('multipart') && contentType === 'multipart/form-data') {
        event.svc.parsedBody = { contentType: event.headers['content-type'] ?? '', bytes };
        // What an idempotency key's fingerprint covers: the exact bytes.
        event.svc.rawBody = bytes.toString('base64');
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
    },
  };
}
