import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which deployed function the code running now belongs to (its `POWERTOOLS_SERVICE_NAME` in the
 * template: `payments`, `delivery-sweeper`, …). The local runtime sets it around each handler it
 * invokes, as AWS would run that handler in that function; the IAM conformance check reads it to
 * hold every AWS call against that function's role. Unset in AWS, where each process is one
 * function anyway.
 */
const scope = new AsyncLocalStorage<string>();

export function asFunction<T>(name: string, work: () => T): T {
  return scope.run(name, work);
}

export function currentFunction(): string | undefined {
  return scope.getStore();
}
