import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DEAD_LETTER_QUEUE_OUTPUTS, type DeadLetterQueueName } from '@svc/api';
import { processFileBatch } from '@svc/reconciliation';
import { Template } from 'aws-cdk-lib/assertions';
import type { SQSEvent } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGE_NAMES } from '../../../infra/config/stages';
import { createServiceApp } from '../../../infra/stacks/service-app';
import { appProps, SKIP_BUNDLING } from '../../../infra/test/support/app-props';
import { eventSourceMappings, functionsByService, queues } from '../../../infra/test/support/template-model';
import { DEAD_LETTER_QUEUE_NAMES, pullDeadLetters, writeEventFile } from './dlq-pull';
import { runOps } from './main';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const TRACE_HEADER = 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1';
const DIGEST = new Uint8Array([0, 1, 2, 254, 255]);

/** What the workers' dead-letter queues hold: a billing message (with attributes), a delivery, an S3 notification. */
const MESSAGES: ReadonlyArray<{ body: string; attributes?: Record<string, MessageAttributeValue> }> = [
  {
    body: JSON.stringify({ subscription_uuid: '0b6f3c58-7d1e-4d8e-9a59-3f2f4bd1e001', due: '2026-01-01' }),
    attributes: {
      trace: { DataType: 'String', StringValue: 'billing-run-42' },
      attempt: { DataType: 'Number', StringValue: '3' },
      digest: { DataType: 'Binary', BinaryValue: DIGEST },
    },
  },
  { body: JSON.stringify({ delivery_uuid: '5e9a5d3c-02b8-4f5e-8f43-3c1c5e6f7a02', attempt: 4 }) },
  {
    body: JSON.stringify({
      Service: 'Amazon S3',
      Event: 's3:TestEvent',
      Time: '2026-01-01T00:00:00.000Z',
      Bucket: 'svc-test-reconciliation',
      RequestId: 'R3QUEST',
      HostId: 'H0ST',
    }),
  },
];

let server: Server;
let endpoint: string;
let sqs: SQSClient;
let workDir: string;
let queueCount = 0;
const previousEndpoint = process.env.AWS_ENDPOINT_URL_SQS;

beforeAll(async () => {
  server = (await createSqsServer({ port: 0, hostname: '127.0.0.1' })) as Server;
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The pull's own client finds the stand-in as the operator's would: through the environment.
  process.env.AWS_ENDPOINT_URL_SQS = endpoint;
  sqs = new SQSClient({ endpoint });
  workDir = mkdtempSync(join(tmpdir(), 'svc-dlq-pull-'));
});

afterAll(async () => {
  if (previousEndpoint === undefined) delete process.env.AWS_ENDPOINT_URL_SQS;
  else process.env.AWS_ENDPOINT_URL_SQS = previousEndpoint;
  rmSync(workDir, { recursive: true, force: true });
  sqs.destroy();
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});

interface Sent {
  url: string;
  arn: string;
  /** SendMessage's answers, by body. */
  sent: Map<string, { messageId: string; md5OfBody: string; md5OfMessageAttributes: string | undefined }>;
}

/**
 * A fresh queue holding MESSAGES. Every pull hides what it took for 30 s, so each test pulls from
 * a queue of its own. The first message carries a trace header, a system attribute beyond the
 * four every record has.
 */
async function deadLetterQueue(): Promise<Sent> {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: `svc-test-dlq-${++queueCount}` }));
  const url = created.QueueUrl as string;
  const got = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const sent: Sent['sent'] = new Map();
  for (const [index, message] of MESSAGES.entries()) {
    const answer = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: message.body,
        MessageAttributes: message.attributes,
        ...(index === 0
          ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: TRACE_HEADER } } }
          : {}),
      }),
    );
    sent.set(message.body, {
      messageId: answer.MessageId as string,
      md5OfBody: answer.MD5OfMessageBody as string,
      md5OfMessageAttributes: answer.MD5OfMessageAttributes,
    });
  }
  return { url, arn: got.Attributes?.QueueArn as string, sent };
}

/** Asserts the event holds exactly the messages sent, each as Lambda's SQS event source shapes it. */
function expectRecordsOf(event: SQSEvent, { arn, sent }: Sent): void {
  expect(Object.keys(event)).toEqual(['Records']);
  expect(event.Records.map((record) => record.body).sort()).toEqual([...sent.keys()].sort());
  for (const record of event.Records) {
    const expected = sent.get(record.body);
    const withAttributes = record.body === MESSAGES[0]?.body;
    expect(record).toEqual({
      messageId: expected?.messageId,
      receiptHandle: expect.any(String),
      body: record.body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d{13}$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
        ...(withAttributes ? { AWSTraceHeader: TRACE_HEADER } : {}),
      },
      messageAttributes: withAttributes
        ? {
            trace: { stringValue: 'billing-run-42', stringListValues: [], binaryListValues: [], dataType: 'String' },
            attempt: { stringValue: '3', stringListValues: [], binaryListValues: [], dataType: 'Number' },
            digest: {
              binaryValue: Buffer.from(DIGEST).toString('base64'),
              stringListValues: [],
              binaryListValues: [],
              dataType: 'Binary',
            },
          }
        : {},
      md5OfBody: expected?.md5OfBody,
      ...(withAttributes ? { md5OfMessageAttributes: expected?.md5OfMessageAttributes } : {}),
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      // The stand-in's ARNs name its own region.
      awsRegion: arn.split(':')[3],
    });
    expect(record.receiptHandle).not.toBe('');
  }
}

/** The ids of what a receive gets; the stand-in answers as soon as it has `max` (or after the wait). */
async function receive(url: string, max: number, waitSeconds: number) {
  const received = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, WaitTimeSeconds: waitSeconds }),
  );
  return (received.Messages ?? []).map((message) => message.MessageId);
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('dlq:pull', () => {
  it('writes the dead letters as the SQS event their worker takes, and leaves them in the queue', async () => {
    const queue = await deadLetterQueue();
    const pulled = await pullDeadLetters({ queueUrl: queue.url, waitSeconds: 0 });
    expect(pulled.queueArn).toBe(queue.arn);
    expectRecordsOf(pulled.event, queue);

    // Hidden for the pull's visibility timeout, not deleted: made visible again through the
    // receipt handles of the event, every message is received once more.
    expect(await receive(queue.url, 10, 0)).toEqual([]);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queue.url,
        Entries: pulled.event.Records.map((record, index) => ({
          Id: String(index),
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );
    expect((await receive(queue.url, MESSAGES.length, 1)).sort()).toEqual(
      [...queue.sent.values()].map((sent) => sent.messageId).sort(),
    );
  });

  it('writes the file for its owner alone, also over a file that was readable by others', () => {
    const file = join(workDir, 'events', 'existing.json');
    const event: SQSEvent = { Records: [] };
    writeEventFile(file, event);
    expect(modeOf(file)).toBe(0o600);
    chmodSync(file, 0o644);
    writeFileSync(file, 'older contents');
    writeEventFile(file, event);
    expect(modeOf(file)).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(event);
  });

  it('hands the file processor an S3 notification from its dead-letter queue as an event it takes', async () => {
    const queue = await deadLetterQueue();
    const { event } = await pullDeadLetters({ queueUrl: queue.url, waitSeconds: 0 });
    const notification = event.Records.filter((record) => record.body.includes('s3:TestEvent'));
    expect(notification).toHaveLength(1);
    const { response } = await processFileBatch({ Records: notification });
    expect(response.batchItemFailures).toEqual([]);
  });

  it('takes at most --max messages, the event on stdout', async () => {
    const queue = await deadLetterQueue();
    const lines: string[] = [];
    const log: string[] = [];
    const stderr = process.stderr.write;
    process.stderr.write = ((chunk: string) => log.push(chunk) > 0) as typeof process.stderr.write;
    try {
      await runOps(['dlq:pull', '--queue-url', queue.url, '--max', '2'], (line) => lines.push(line));
    } finally {
      process.stderr.write = stderr;
    }
    const event = JSON.parse(lines.join('\n')) as SQSEvent;
    expect(event.Records).toHaveLength(2);
    expect(log.join('')).toContain(`Pulled 2 messages from ${queue.url}`);
    await expect(runOps(['dlq:pull', '--queue-url', queue.url, '--max', '101'], () => undefined)).rejects.toThrow(
      '--max is 1 to 100',
    );
  });

  it('refuses a queue name it has no output for, listing the ones it has, before asking AWS anything', async () => {
    const known = DEAD_LETTER_QUEUE_NAMES.join(', ');
    await expect(runOps(['dlq:pull', '--stage', 'prod', '--queue', 'billing-dlq'], () => undefined)).rejects.toThrow(
      `Unknown --queue billing-dlq: the dead-letter queues dlq:pull knows are ${known}`,
    );
    await expect(runOps(['dlq:pull', '--stage', 'prod', '--queue', 'stream'], () => undefined)).rejects.toThrow(
      /stream publisher's dead-letter queue holds the shard and sequence numbers/,
    );
    await expect(runOps(['dlq:pull', '--stage', 'prod', '--queue-url', 'http://x'], () => undefined)).rejects.toThrow(
      /with --stage prod, use --queue/,
    );
  });

  it('runs from the command line, writing the file 0600 and the summary on stderr', async () => {
    const queue = await deadLetterQueue();
    const file = join(workDir, 'cli', 'dlq.json');
    const { stderr } = await promisify(execFile)(
      join(REPO_ROOT, 'node_modules/.bin/tsx'),
      ['apps/ops/src/main.ts', 'dlq:pull', '--queue-url', queue.url, '--out', file, '--max', String(MESSAGES.length)],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          AWS_ENDPOINT_URL_SQS: endpoint,
          AWS_REGION: 'eu-central-2',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
      },
    );
    expect(modeOf(file)).toBe(0o600);
    expectRecordsOf(JSON.parse(readFileSync(file, 'utf8')) as SQSEvent, queue);
    expect(stderr).toContain(`Pulled 3 messages from ${queue.url} (${queue.arn})`);
    expect(stderr).toContain(`${file} holds the messages as sent, which for a deployed stage is production data`);
  });
});

/** The worker (its POWERTOOLS_SERVICE_NAME) each named dead-letter queue belongs to. */
const WORKER_OF = {
  billing: 'billing-worker',
  delivery: 'delivery-worker',
  'fan-out': 'fan-out',
  files: 'file-processor',
  mail: 'mail-worker',
  receipts: 'receipts-worker',
} as const satisfies Record<DeadLetterQueueName, string>;

describe('the dead-letter queue outputs', () => {
  let templates: Template[];

  beforeAll(() => {
    // App structure only: no bundles, as `cdk synth --exclusively` does for the other stacks.
    templates = createServiceApp(appProps(SKIP_BUNDLING)).stacks.map((stack) => Template.fromStack(stack));
  });

  it('name, in every stage, the dead-letter queue of each SQS-fed worker under its name, and no other queue', () => {
    expect(templates).toHaveLength(STAGE_NAMES.length);
    for (const template of templates) {
      const serviceOf = new Map([...functionsByService(template)].map(([service, fn]) => [fn.logicalId, service]));
      const allQueues = queues(template);
      // Each SQS event source's worker and the dead-letter queue its source queue redrives to.
      const deadLettersOf = new Map<string, string | undefined>();
      for (const mapping of eventSourceMappings(template)) {
        const [source, attribute] = mapping.EventSourceArn['Fn::GetAtt'];
        if (attribute !== 'Arn') continue;
        const worker = serviceOf.get(mapping.FunctionName.Ref);
        if (!worker) throw new Error(`No service name on ${mapping.FunctionName.Ref}`);
        deadLettersOf.set(
          worker,
          allQueues.get(source)?.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0],
        );
      }
      expect([...deadLettersOf.keys()].sort()).toEqual(Object.values(WORKER_OF).sort());

      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(
        Object.keys(outputs)
          .filter((key) => key.includes('DeadLetter'))
          .sort(),
      ).toEqual(Object.values(DEAD_LETTER_QUEUE_OUTPUTS).sort());
      for (const [name, key] of Object.entries(DEAD_LETTER_QUEUE_OUTPUTS)) {
        const queue = deadLettersOf.get(WORKER_OF[name as DeadLetterQueueName]);
        expect(queue, name).toBeDefined();
        expect(outputs[key]?.Value, name).toEqual({ Ref: queue });
      }
    }
  });
});
