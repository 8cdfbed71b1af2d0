import type { Context } from 'aws-lambda';
import { logger } from './logger';
import { traced } from './tracing';

/**
 * A worker's Lambda entry (a queue, a stream, a schedule): its log lines carry the invocation's
 * request id and cold start like the HTTP functions' (Powertools Logger's Lambda context), and
 * where the stage traces calls the handler is a subsegment of its own. The local runtime calls
 * the same entry, with a context of its own making or none.
 */
export function workerHandler<E, R>(
  name: string,
  handle: (event: E) => Promise<R>,
): (event: E, context?: Context) => Promise<R> {
  return async (event, context) => {
    // Replaced by the next invocation's, as Powertools' own middleware does.
    if (context) logger.addContext(context);
    return traced(name, () => handle(event));
  };
}
