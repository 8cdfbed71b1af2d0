import { AppError, TooManyRequestsError } from '@svc/core';
import type { StackResult } from './context';
import { withPageSecurity } from './page-headers';
import type { HttpResult } from './route';

/**
 * JSON answers say `application/json` and nothing more: RFC 8259 defines no charset parameter
 * for it ("No 'charset' parameter is defined for this registration", section 11; JSON text is
 * UTF-8, section 8.1), and published clients of this interface compare the header exactly.
 */
export const JSON_TYPE = 'application/json';

export function toLambdaResult(result: HttpResult): StackResult {
  // Every HTML page gets the one security header set here, where a page becomes a response.
  const headers: Record<string, string> =
    result.html !== undefined ? withPageSecurity(result.headers ?? {}) : { ...(result.headers ?? {}) };
  let body: string | undefined;
  if (result.binary !== undefined) {
    headers['content-type'] ??= result.binary.contentType;
    const cookies = result.cookies && result.cookies.length > 0 ? { cookies: result.cookies } : {};
    return {
      statusCode: result.status,
      headers,
      body: Buffer.from(result.binary.bytes).toString('base64'),
      isBase64Encoded: true,
      ...cookies,
    };
  }
  if (result.html !== undefined) {
    headers['content-type'] ??= 'text/html; charset=utf-8';
    body = result.html;
  } else if (result.text !== undefined) {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    body = result.text;
  } else if (result.body !== undefined) {
    headers['content-type'] ??= JSON_TYPE;
    body = JSON.stringify(result.body);
  }
  const cookies = result.cookies && result.cookies.length > 0 ? { cookies: result.cookies } : {};
  return body === undefined
    ? { statusCode: result.status, headers, ...cookies }
    : { statusCode: result.status, headers, body, ...cookies };
}

/** The contract's error bodies: Simple for 401, Nested for everything else. */
export function errorResult(error: AppError, requestId: string): StackResult {
  if (error.statusCode === 401) {
    return toLambdaResult({ status: 401, body: { message: error.message } });
  }
  return toLambdaResult({
    status: error.statusCode,
    ...(error instanceof TooManyRequestsError ? { headers: { 'retry-after': String(error.retryAfterSeconds) } } : {}),
    body: {
      request_id: requestId,
      error: { http_code: error.statusCode, code: error.code, message: error.details },
    },
  });
}

export function internalErrorResult(requestId: string): StackResult {
  return toLambdaResult({
    status: 500,
    body: {
      request_id: requestId,
      error: {
        http_code: 500,
        code: 'internal_error',
        message: [
          {
            code: 'error.internal',
            property: '',
            message: `Something went wrong on our side. Quote request id ${requestId} when you contact support.`,
          },
        ],
      },
    },
  });
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
