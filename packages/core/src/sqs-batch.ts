import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from './logger';

/**
 * Every queue worker's batch (fan-out, delivery, billing, reconciliation files), message by
 * message: each body is parsed (one that cannot be is reported at once), the parsed ones are
 * worked on together, and each message whose work failed is reported alone
 * (ReportBatchItemFailures), so the queue retries only those. Our own rather than Powertools'
 * BatchProcessor: that one hands records to a handler one at a time, and the fan-out and the
 * delivery worker write a whole batch's work together.
 */
export async function handleSqsBatch<T, R>(
  event: SQSEvent,
  what: string,
  parse: (body: unknown, record: SQSRecord) => T,
  work: (items: T[]) => Promise<Array<PromiseSettledResult<R>>>,
): Promise<{ response: SQSBatchResponse; results: R[] }> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const parsed: Array<{ messageId: string; item: T }> = [];
  for (const record of event.Records) {
    try {
      parsed.push({ messageId: record.messageId, item: parse(JSON.parse(record.body), record) });
    } catch (error) {
      logger.error(`message is not ${what}`, { messageId: record.messageId, error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  const results: R[] = [];
  (await work(parsed.map((p) => p.item))).forEach((outcome, index) => {
    const messageId = parsed[index]?.messageId ?? '';
    if (outcome.status === 'fulfilled') results.push(outcome.value);
    else {
      // An expected refusal (a message to come back later) is no error of the service.
      const expected = (outcome.reason as { expected?: unknown } | undefined)?.expected === true;
      (expected ? logger.info : logger.error).call(logger, `${what} failed`, { messageId, error: outcome.reason });
      batchItemFailures.push({ itemIdentifier: messageId });
    }
  });
  return { response: { batchItemFailures }, results };
}

/** Work on the items one after another (a file at a time: memory stays bounded), each settled on its own. */
export async function oneByOne<T, R>(
  items: T[],
  work: (item: T) => Promise<R>,
): Promise<Array<PromiseSettledResult<R>>> {
  const settled: Array<PromiseSettledResult<R>> = [];
  for (const item of items) {
    try {
      settled.push({ status: 'fulfilled', value: await work(item) });
    } catch (reason) {
      settled.push({ status: 'rejected', reason });
    }
  }
  return settled;
}
