import { tracer } from './tracing';

/**
 * The AWS SDK's logger middleware formats every call's input and output for the client's logger
 * (walking their schemas to mask sensitive members) even when that logger discards it, as the
 * default one does: on the event pipeline's hot path it cost more CPU than signing the request.
 * Our own logs say what happened; SDK errors still reach the caller as before.
 */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/**
 * Every AWS SDK client the service makes goes through here once: without the SDK's call logging
 * (above) and, where the stage traces calls, with each call an X-Ray subsegment.
 */
export function sdkClient<T extends { middlewareStack: { remove(toRemove: string): boolean } }>(client: T): T {
  client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  return tracer ? tracer.captureAWSv3Client(client) : client;
}
