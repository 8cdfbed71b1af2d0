import type { MiddlewareObj } from '@middy/core';
import { logger } from '@svc/core';
import type { StackEvent, StackResult } from '../context';
import { errorResult, internalErrorResult, isAppError } from '../responses';

/**
 * Maps domain errors to the contract's shapes. Only errors that are ours reach the client;
 * anything else is a generic 500 with the request id, and the cause goes to the log.
 */
/** The message of the log line of a request that ended in an unhandled error (a 500); alarms count it. */
export const UNHANDLED_ERROR_MESSAGE = 'Unhandled error';

export function errorMapper(): MiddlewareObj<StackEvent, StackResult> {
  return {
    onError: (request) => {
      const { error } = request;
      const requestId = request.event.svc?.requestId ?? 'unknown';
      if (isAppError(error)) {
        request.response = errorResult(error, requestId);
        return;
      }
      logger.error(UNHANDLED_ERROR_MESSAGE, { requestId, route: request.event.routeKey, error: error as Error });
      request.response = internalErrorResult(requestId);
    },
  };
}
