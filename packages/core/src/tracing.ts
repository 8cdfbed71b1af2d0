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
export const tracer: Tracer | undefined =
  process.env.SVC_TRACE_CALLS === 'true'
    ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ captureHTTPsRequests: true })
    : undefined;

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
