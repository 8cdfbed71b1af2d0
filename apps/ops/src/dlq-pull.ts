import { closeSync, fchmodSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_QUEUE_OUTPUTS, type DeadLetterQueueName, stackName } from '@svc/api';
import { toRecord } from '@svc/local';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { outputsOfStage } from './target';

/** Messages a pull takes unless --max says otherwise, and the most it takes. */
export const DLQ_PULL_DEFAULT = 10;
export const DLQ_PULL_MAX = 100;
/**
 * Seconds a pulled message stays hidden in its queue. Short on purpose: nothing is deleted, and
 * the message is back for a redrive (or the next pull) half a minute later.
 */
export const DLQ_PULL_VISIBILITY_SECONDS = 30;
/** SQS's maximum per receive. */
const RECEIVE_MAX = 10;
/**
 * A receive waits this long for messages (long polling): a short poll asks only some of SQS's
 * servers, and on a queue holding a handful of dead letters it can answer empty while they wait.
 */
const LONG_POLL_SECONDS = 1;

/** Dead-letter queues that are no worker's SQS messages, and why a pull would not make an event of them. */
const NOT_SQS_EVENTS: Readonly<Record<string, string>> = {
  stream:
    "the stream publisher's dead-letter queue holds the shard and sequence numbers of table stream records it gave up on, not SQS messages of a function; the items are in the table",
};

export const DEAD_LETTER_QUEUE_NAMES = Object.keys(DEAD_LETTER_QUEUE_OUTPUTS) as DeadLetterQueueName[];

export interface DlqPullOptions {
  /** A deployed stage, whose stack outputs name the queue; `local` (or none) needs `queueUrl`. */
  stage?: string;
  /** A name of DEAD_LETTER_QUEUE_OUTPUTS. */
  queue?: string;
  /** The queue itself, instead of the lookup: the local SQS stand-in, or any queue the credentials reach. */
  queueUrl?: string;
  /** At most this many messages (1 to DLQ_PULL_MAX; DLQ_PULL_DEFAULT if not given). */
  max?: number;
  /** Long polling per receive; tests on the local stand-in, which waits out the whole time, pass 0. */
  waitSeconds?: number;
}

export interface DlqPull {
  /** The messages as Lambda's SQS event source would hand them to the queue's worker. */
  event: SQSEvent;
  queueUrl: string;
  queueArn: string;
  /** Which queue, in words, for the summary. */
  description: string;
}

/** The stack output naming a dead-letter queue; an unknown name fails listing the known ones. */
export function deadLetterOutputOf(queue: string): string {
  if (Object.hasOwn(DEAD_LETTER_QUEUE_OUTPUTS, queue)) return DEAD_LETTER_QUEUE_OUTPUTS[queue as DeadLetterQueueName];
  const why = NOT_SQS_EVENTS[queue];
  const known = `the dead-letter queues dlq:pull knows are ${DEAD_LETTER_QUEUE_NAMES.join(', ')}`;
  throw new Error(why ? `--queue ${queue}: ${why}; ${known}` : `Unknown --queue ${queue}: ${known}`);
}

/** The queue's URL and a description: given directly, or the stage's stack output for the name. */
export async function findDeadLetterQueue(options: DlqPullOptions): Promise<{ url: string; description: string }> {
  const stage = options.stage === 'local' ? undefined : options.stage;
  if (options.queueUrl) {
    if (stage) {
      throw new Error(`--queue-url names a queue directly, without --stage; with --stage ${stage}, use --queue`);
    }
    if (options.queue) throw new Error('Give --queue or --queue-url, not both');
    return { url: options.queueUrl, description: options.queueUrl };
  }
  if (!options.queue) throw new Error(`dlq:pull needs --queue ${DEAD_LETTER_QUEUE_NAMES.join('|')}, or --queue-url`);
  const output = deadLetterOutputOf(options.queue);
  if (!stage) {
    // The local stand-in's queues live in the running `pnpm start` and are named nowhere else.
    throw new Error('--queue looks the queue up in a deployed stage: give --stage, or the queue with --queue-url');
  }
  return {
    url: await stackOutput(stage, output),
    description: `the ${options.queue} dead-letter queue of stage ${stage}`,
  };
}

/**
 * Receives up to `max` messages of a dead-letter queue, ten at a time until there are enough or a
 * receive brings nothing new, and converts them as the local poller does. None is deleted: each
 * stays hidden for DLQ_PULL_VISIBILITY_SECONDS only, then waits in the queue as before.
 */
export async function pullDeadLetters(options: DlqPullOptions): Promise<DlqPull> {
  const max = options.max ?? DLQ_PULL_DEFAULT;
  if (!Number.isInteger(max) || max < 1 || max > DLQ_PULL_MAX) throw new Error(`--max is 1 to ${DLQ_PULL_MAX}`);
  const { url, description } = await findDeadLetterQueue(options);
  const sqs = new SQSClient({});
  try {
    const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    const queueArn = attributes.Attributes?.QueueArn;
    if (!queueArn) throw new Error(`SQS gave no ARN for ${url}`);
    // arn:aws:sqs:<region>:<account>:<name>: the region the queue (and its worker) is in.
    const region = queueArn.split(':')[3] ?? '';
    const records = new Map<string, SQSRecord>();
    while (records.size < max) {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: Math.min(RECEIVE_MAX, max - records.size),
          VisibilityTimeout: DLQ_PULL_VISIBILITY_SECONDS,
          WaitTimeSeconds: options.waitSeconds ?? LONG_POLL_SECONDS,
          MessageSystemAttributeNames: ['All'],
          // The older name of the same request: the local SQS stand-in reads only this one.
          AttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      // A message can come twice (SQS delivers at least once; a slow pull outlives the timeout).
      const fresh = (received.Messages ?? []).filter((m) => m.MessageId && !records.has(m.MessageId));
      if (fresh.length === 0) break;
      for (const message of fresh) records.set(message.MessageId as string, toRecord(message, queueArn, region));
    }
    return { event: { Records: [...records.values()] }, queueUrl: url, queueArn, description };
  } finally {
    sqs.destroy();
  }
}

/**
 * Writes the event for the owner's eyes only: the file is created 0600, and one that was there
 * already is narrowed to 0600 before anything is written (open's mode applies to new files only).
 */
export function writeEventFile(file: string, event: SQSEvent): void {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeFileSync(fd, `${JSON.stringify(event, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * `pnpm ops dlq:pull`: the event to `out` (stdout) or to the --out file; the summary and the
 * reminder that the messages are production data go to `log` (stderr), apart from the event.
 */
export async function runDlqPull(
  values: { stage?: string; queue?: string; 'queue-url'?: string; out?: string; max?: string },
  out: (line: string) => void,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const pulled = await pullDeadLetters({
    stage: values.stage,
    queue: values.queue,
    queueUrl: values['queue-url'],
    max: values.max === undefined ? undefined : Number(values.max),
  });
  const count = pulled.event.Records.length;
  if (values.out) writeEventFile(values.out, pulled.event);
  else out(JSON.stringify(pulled.event, null, 2));
  log(
    `Pulled ${count} message${count === 1 ? '' : 's'} from ${pulled.description} (${pulled.queueArn}); ` +
      `none deleted, visible in the queue again after ${DLQ_PULL_VISIBILITY_SECONDS} s`,
  );
  if (count > 0) {
    log(
      `${values.out ?? 'The event'} holds the messages as sent, which for a deployed stage is production data ` +
        '(donor details included): keep it to yourself, never commit it, and delete it when done',
    );
  }
}

async function stackOutput(stage: string, key: string): Promise<string> {
  const value = (await outputsOfStage(stage)).get(key);
  if (!value) throw new Error(`Stack ${stackName(stage)} has no ${key} output (deployed before dlq:pull existed?)`);
  return value;
}
