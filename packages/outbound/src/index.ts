/**
 * Outbound HTTP for webhook deliveries, guarded against server-side request forgery: targets are
 * checked after DNS resolution (every address must be public unless the stage allows private
 * ones) and the connection is pinned to the checked address, so rebinding cannot slip past.
 */
export { type BlockedReason, BlockedTargetError } from './blocked-target-error';
export type { LookupAddress, LookupFn } from './lookup';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type PostJsonOptions,
  type PostResult,
  postJson,
} from './post-json';
export { isLoopbackAddress, isNonPublicLiteralHost, isPublicAddress } from './public-address';
export { type ResolvedTarget, type ResolveTargetOptions, resolveTarget } from './resolve-target';
