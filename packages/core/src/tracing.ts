import { createRequire } from 'node:module';
import type { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * X-Ray subsegments for what a function calls (Powertools Tracer): every AWS SDK call, every
 * outbound HTTP(S) request (webhook deliveries, Stripe, reCAPTCHA) and the handler itself with a
 * `ColdStart` annotation, inside the segment active tracing gives each invocation.
 *
 * Only where the stage asks for it (`SVC_TRACE_CALLS=true`, StageConfig.traceCalls): the X-Ray
 * SDK behind Tracer costs about 28 ms of every cold start, so it is loaded only then. Elsewhere
 * (dev, the local runtime, the tests) `tracer` is undefined and nothing is loaded. Responses are
 * never recorded as metadata: they hold supporters' personal data.
 */
export const tracer: Tracer | undefined = process.env.SVC_TRACE_CALLS === 'true' ? loadTracer() : undefined;

/**
 * Loads Tracer synchronously: a top-level `await import()` would make every module that imports
 * this one initialise asynchronously in a bundle, and esbuild does not always wait for such a
 * module behind a re-export (the payments bundle then ran its repository before @svc/table had
 * initialised). In a function's bundle the package is in the code where the stage traces calls,
 * and beside it (the bundle's own node_modules) where not, so an untraced function never reads it
 * (infra/constructs/bundle.ts); under tsx or plain Node, it is read from the repository's
 * node_modules.
 */
function loadTracer(): Tracer {
  const { Tracer: TracerClass } = (
    typeof require === 'function'
      ? require('@aws-lambda-powertools/tracer')
      : createRequire(import.meta.url)('@aws-lambda-powertools/tracer')
  ) as typeof import('@aws-lambda-powertools/tracer');
  return new TracerClass({ captureHTTPsRequests: true });
}

/**
 * Powertools' middy middleware that puts an HTTP handler in a subsegment of its own (cold start
 * annotated, never the response), where calls are traced; loaded from beside the code with
 * Tracer, as `loadTracer` does.
 */
type TracerMiddleware = ReturnType<typeof import('@aws-lambda-powertools/tracer/middleware')['captureLambdaHandler']>;

export function tracerMiddleware(): TracerMiddleware | undefined {
  if (!tracer) return undefined;
  const { captureLambdaHandler } = (
    typeof require === 'function'
      ? require('@aws-lambda-powertools/tracer/middleware')
      : createRequire(import.meta.url)('@aws-lambda-powertools/tracer/middleware')
  ) as typeof import('@aws-lambda-powertools/tracer/middleware');
  return captureLambdaHandler(tracer, { captureResponse: false });
}

/**
 * A worker's Lambda entry (queues, streams, schedules): the handler in a subsegment of its own,
 * with the cold start annotated and an error recorded, when calls are traced.
 */
export async function traced<T>(name: string, run: () => Promise<T>): Promise<T> {
  const parent = tracer?.getSegment();
  if (!tracer || !parent) return run();
  const segment = parent.addNewSubsegment(`## ${name}`);
  tracer.setSegment(segment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  try {
    return await run();
  } catch (error) {
    if (error instanceof Error) tracer.addErrorAsMetadata(error);
    throw error;
  } finally {
    segment.close();
    tracer.setSegment(parent);
  }
}
