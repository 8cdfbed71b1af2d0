import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureLocalQueues, QueuePoller } from './queues';

/**
 * Issue 44: `pnpm start` polled the delivery queue by draining it, one drain at a time, and a
 * drain waited for its slowest batch; a batch waiting on a receiver that never answers held every
 * later message (another organisation's too) until it timed out. The poller starts invocations
 * as Lambda's SQS event source does: up to its concurrency, none waiting for another.
 */
let sqs: SQSClient;

beforeAll(async () => {
  const { endpoint } = await ensureLocalQueues();
  sqs = new SQSClient({ endpoint, region: 'eu-central-2', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});

async function queue(name: string): Promise<string> {
  // Hidden while received for 30 s, as the deployed queues' messages are (the stand-in's default is none).
  const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '30' } }));
  return created.QueueUrl as string;
}

const visible = async (url: string) =>
  Number(
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] })))
      .Attributes?.ApproximateNumberOfMessages,
  );

/** A worker whose "hang" messages wait until released; every other message is done at once. */
function worker() {
  const handled: string[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((done) => {
    release = done;
  });
  const work = async (event: SQSEvent) => {
    if (event.Records.some((record) => record.body === 'hang')) await released;
    handled.push(...event.Records.map((record) => record.body));
    return { failed: new Set<string>(), result: event.Records.length };
  };
  return { handled, work, release: () => release() };
}

describe('the local queue poller', () => {
  it('hands a later message to a free invocation while an earlier batch hangs', async () => {
    const url = await queue(`poller-${Date.now()}`);
    const { handled, work, release } = worker();
    const poller = new QueuePoller(4, async () => url, work);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'hang' }));
    expect(await poller.tick()).toBe(1);
    expect(poller.busy).toBe(1);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'other organisation' }));
    expect(await poller.tick()).toBe(1);
    // Done while the hanging batch still waits.
    while (!handled.includes('other organisation')) await new Promise((done) => setImmediate(done));
    expect(handled).toEqual(['other organisation']);
    // Its invocation ends (its message deleted) while the other still hangs.
    while (poller.busy > 1) await new Promise((done) => setImmediate(done));
    expect(handled).not.toContain('hang');
    release();
    await poller.idle();
    expect(handled).toEqual(['other organisation', 'hang']);
    // Handled messages are deleted, as the event source deletes a batch that succeeded.
    expect(await visible(url)).toBe(0);
    expect(poller.attempted).toBe(2);
  });

  it('starts no more invocations than its concurrency; what is left stays in the queue', async () => {
    const url = await queue(`poller-cap-${Date.now()}`);
    const { work, release } = worker();
    const poller = new QueuePoller(2, async () => url, work);
    for (let i = 0; i < 2; i++) {
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'hang' }));
      await poller.tick();
    }
    expect(poller.busy).toBe(2);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'waits its turn' }));
    expect(await poller.tick()).toBe(0);
    release();
    await poller.idle();
    expect(await poller.tick()).toBe(1);
    await poller.idle();
    expect(await visible(url)).toBe(0);
  });
});
