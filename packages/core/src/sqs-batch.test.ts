import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handleSqsBatch, oneByOne } from './sqs-batch';

const batch = (...bodies: string[]): SQSEvent =>
  ({ Records: bodies.map((body, index) => ({ messageId: `m${index}`, body })) }) as unknown as SQSEvent;

describe('a queue batch', () => {
  it('reports exactly the messages that could not be parsed or whose work failed, and returns the rest', async () => {
    const { response, results } = await handleSqsBatch(
      batch('{"n":1}', 'not json', '{"n":2}', '{"x":3}', '{"n":-1}'),
      'a number',
      (body) => {
        const n = (body as { n?: unknown }).n;
        if (typeof n !== 'number') throw new Error('no n');
        return n;
      },
      (numbers) => oneByOne(numbers, async (n) => (n < 0 ? Promise.reject(new Error('negative')) : n * 10)),
    );
    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: 'm1' },
      { itemIdentifier: 'm3' },
      { itemIdentifier: 'm4' },
    ]);
    expect(results).toEqual([10, 20]);
  });

  it('works one by one when asked: the next item starts after the last has finished, a failure stops nothing', async () => {
    const log: string[] = [];
    const settled = await oneByOne([1, 2, 3], async (n) => {
      log.push(`start ${n}`);
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`end ${n}`);
      if (n === 2) throw new Error('two');
      return n;
    });
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
