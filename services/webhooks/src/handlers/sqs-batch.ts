import { logger } from '@svc/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * A queue batch, message by message: each body is parsed (one that cannot be is reported at
 * once), the parsed ones are worked on together, and each message whose work failed is reported
 * alone (ReportBatchItemFailures), so the queue retries only those.
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
