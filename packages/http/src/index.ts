export * from './authenticator';
export {
  addressKey,
  clientAddress,
  ORIGIN_VERIFY_HEADER,
  VIEWER_ADDRESS_HEADER,
  viewerAddress,
} from './client-address';
export * from './lambda-handler';
export { MAX_BODY_BYTES } from './middleware/body-parser';
export { UNHANDLED_ERROR_MESSAGE } from './middleware/error-mapper';
export { IDEMPOTENCY_RECORD, MAX_KEY_LENGTH as MAX_IDEMPOTENCY_KEY_LENGTH } from './middleware/idempotency';
export {
  ADDRESS_LIMITS,
  addressLimit,
  parseRateLimit,
  type RateLimit,
  RateLimiter,
  type SharedWindows,
  tableWindows,
  WINDOW_SHARDS,
} from './middleware/rate-limit';
export * from './openapi';
export { PAGE_SECURITY_HEADERS, pagePolicy } from './page-headers';
export { errorResult, internalErrorResult, JSON_TYPE, toLambdaResult } from './responses';
export * from './route';
export * from './schemas';
