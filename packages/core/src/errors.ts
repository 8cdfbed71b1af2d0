/**
 * Domain errors. Each carries the HTTP status and top-level code of the contract's Nested shape,
 * so one error middleware can map them; domain code never builds HTTP responses itself.
 */
export interface ErrorDetail {
  code: string;
  property: string;
  message: string;
}

export abstract class AppError extends Error {
  abstract readonly statusCode: number;
  abstract readonly code: string;
  readonly details: ErrorDetail[];

  constructor(message: string, details: ErrorDetail[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.details = details.length > 0 ? details : [{ code: 'error.generic', property: '', message }];
  }
}

export class ValidationError extends AppError {
  readonly statusCode = 400;
  readonly code = 'bad_request';
  static field(property: string, code: string, message: string): ValidationError {
    return new ValidationError(message, [{ code, property, message }]);
  }
}

/** 401: rendered in the contract's Simple shape `{"message": "…"}`. */
export class UnauthorizedError extends AppError {
  readonly statusCode = 401;
  readonly code = 'unauthorized';
}

export class ForbiddenError extends AppError {
  readonly statusCode = 403;
  readonly code = 'forbidden';
  constructor(message = 'You have no grant on this resource') {
    super(message, [{ code: 'error.access.forbidden', property: '', message }]);
  }
}

export class NotFoundError extends AppError {
  readonly statusCode = 404;
  readonly code = 'not_found';
  constructor(message = 'Not found') {
    super(message, [{ code: 'error.resource.not_found', property: '', message }]);
  }
}

export class ConflictError extends AppError {
  readonly statusCode = 409;
  readonly code = 'conflict';
  constructor(message: string, detailCode = 'error.state.conflict', property = '') {
    super(message, [{ code: detailCode, property, message }]);
  }
}

export class PayloadTooLargeError extends AppError {
  readonly statusCode = 413;
  readonly code = 'payload_too_large';
  constructor(limitBytes: number) {
    const message = `The request body exceeds ${limitBytes} bytes`;
    super(message, [{ code: 'error.request.payload_too_large', property: 'body', message }]);
  }
}

/** Headers over the server's limit (16 KiB locally; API Gateway has its own). */
export class HeadersTooLargeError extends AppError {
  readonly statusCode = 431;
  readonly code = 'request_header_fields_too_large';
  constructor(limitBytes: number) {
    const message = `The request headers exceed ${limitBytes} bytes`;
    super(message, [{ code: 'error.request.headers_too_large', property: 'headers', message }]);
  }
}

export class UnprocessableError extends AppError {
  readonly statusCode = 422;
  readonly code = 'unprocessable_entity';
  constructor(message: string, detailCode: string, property = '') {
    super(message, [{ code: detailCode, property, message }]);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly statusCode = 415;
  readonly code = 'unsupported_media_type';
  constructor(contentType: string) {
    const message = `Content type ${contentType || '(none)'} is not supported; send application/json`;
    super(message, [{ code: 'error.request.unsupported_media_type', property: 'content-type', message }]);
  }
}

/** 503: a dependency is down (the search engine); the request changed nothing and may be retried. */
export class ServiceUnavailableError extends AppError {
  readonly statusCode = 503;
  readonly code = 'service_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, [{ code: 'error.service.unavailable', property: '', message }], options);
  }
}

/**
 * 429: the caller sent more than its limit (docs/API.md, "Rate limits"); nothing was done. It
 * may send again after `retryAfterSeconds` (the response's `Retry-After`).
 */
export class TooManyRequestsError extends AppError {
  readonly statusCode = 429;
  readonly code = 'too_many_requests';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, [{ code: 'error.rate_limited', property: '', message }]);
  }
}
