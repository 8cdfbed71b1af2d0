import { createHash } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { API_EXAMPLES, pathParameters, ROUTE_TABLE, WORKERS } from '@svc/api';
import { toApiGatewayEvent } from '@svc/local';
import { newOrganisationWrite, type Organisation } from '@svc/organisations';
import type { DueEntry } from '@svc/subscriptions';
import type { DeliveryMessage, Envelope } from '@svc/webhooks';
import type {
  APIGatewayProxyEventV2,
  CloudFormationCustomResourceDeleteEvent,
  DynamoDBStreamEvent,
  S3Event,
  SQSEvent,
} from 'aws-lambda';
import type { AppFunction, EventKind } from './app-functions';

/**
 * A sample event for each function, of the kind that starts it in AWS (read from the template)
 * and typed with the types its handler takes, so a sample cannot drift from what the handler
 * reads. `pnpm invoke --sample <function>` prints one; `events/` keeps one of each kind.
 */
const REGION = 'eu-central-2';
const SAMPLE_TIME = Date.UTC(2026, 0, 15, 9, 30);
const SAMPLE_ORGANISATION = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const SAMPLE_UUID = '3d0c6c1e-2b7a-4f1e-9a55-1c2d3e4f5a6b';
const SAMPLE_MESSAGE = '0e5b7a3c-9d14-4c2e-8f60-7a1b2c3d4e5f';
const SAMPLE_REFUND = '8a4f2e1d-6c3b-4a59-b7e8-2d1c0b9a8f7e';

/** An SQS batch of one message, as Lambda's SQS event source hands it over. */
export function sqsEvent(body: unknown, queue: string): SQSEvent {
  const text = JSON.stringify(body);
  return {
    Records: [
      {
        messageId: SAMPLE_MESSAGE,
        receiptHandle: `sample-receipt-${SAMPLE_MESSAGE}`,
        body: text,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(SAMPLE_TIME),
          SenderId: 'SAMPLE',
          ApproximateFirstReceiveTimestamp: String(SAMPLE_TIME),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(text).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${REGION}:000000000000:${queue}`,
        awsRegion: REGION,
      },
    ],
  };
}

/** An API Gateway HTTP API (payload 2.0) request to one of the function's routes: the one with an example from the contract tests. */
function apiSample(fn: AppFunction): APIGatewayProxyEventV2 {
  const routes = fn.routes.flatMap((key) => {
    const entry = ROUTE_TABLE.find((candidate) => `${candidate.route.method} ${candidate.route.path}` === key);
    return entry ? [entry.route] : [];
  });
  // A route that needs no token answers for real; the others answer 401 until an `authorization` header is added.
  const route =
    routes.find((candidate) => candidate.auth !== 'token' && API_EXAMPLES[candidate.operationId]) ??
    routes.find((candidate) => API_EXAMPLES[candidate.operationId]) ??
    routes[0];
  if (!route) throw new Error(`${fn.path} serves no route of the route table`);
  const example = API_EXAMPLES[route.operationId];
  const url = example?.url ?? route.path.replace(/\{[^}]+\}/g, SAMPLE_UUID);
  const body = example?.request === undefined ? undefined : JSON.stringify(example.request);
  // Path parameters: the example's, else a sample uuid in each.
  const parameters = pathParameters(route.path, new URL(url, 'http://api.example.org').pathname);
  const event = toApiGatewayEvent(
    {
      method: route.method,
      url,
      headers: {
        host: 'api.example.org',
        'user-agent': 'pnpm-invoke',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: Buffer.from(body ?? ''),
      sourceIp: '198.51.100.7',
    },
    `${route.method} ${route.path}`,
    Object.keys(parameters).length > 0 ? parameters : undefined,
  );
  // A fixed request id and time: the same sample every time.
  const time = new Date(SAMPLE_TIME);
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      requestId: SAMPLE_MESSAGE,
      time: time.toUTCString(),
      timeEpoch: SAMPLE_TIME,
    },
  };
}

/** The messages of each SQS-fed function, by its handler's entry (a new one without a sample fails the test). */
const SQS_BODIES: Record<string, () => unknown> = {
  [WORKERS.billingWorker.entry]: () =>
    ({ kind: 'subscription', subscription_uuid: SAMPLE_UUID, due: SAMPLE_TIME }) satisfies DueEntry,
  [WORKERS.deliveryWorker.entry]: () => ({ delivery_uuid: SAMPLE_UUID }) satisfies DeliveryMessage,
  // A mail queued by its id (a portal link's): the worker reads it from the outbox and sends it.
  [WORKERS.mailWorker.entry]: () => ({ mail_id: `portal_link:${SAMPLE_UUID}` }),
  // The bus rule's target: the EventBridge event whose detail is the envelope.
  [WORKERS.fanOut.entry]: () => ({
    version: '0',
    id: SAMPLE_MESSAGE,
    'detail-type': 'svc.organisations.organisation.approved',
    source: 'svc',
    account: '000000000000',
    time: new Date(SAMPLE_TIME).toISOString(),
    region: REGION,
    resources: [],
    detail: {
      uuid: SAMPLE_UUID,
      name: 'svc.organisations.organisation.approved',
      created: SAMPLE_TIME,
      object: 'organisation',
      object_uuid: SAMPLE_ORGANISATION,
      organisation_uuid: SAMPLE_ORGANISATION,
      sequence: 1,
      data: { uuid: SAMPLE_ORGANISATION, approval_status: 'approved' },
    } satisfies Envelope,
  }),
  // The bus rule's target (receipts.ts): a refund of a payment the store does not hold, which the
  // worker reads and leaves alone (no receipt to replace), as it does a refund of an unreceipted gift.
  [WORKERS.receiptsWorker.entry]: () => ({
    version: '0',
    id: SAMPLE_MESSAGE,
    'detail-type': 'svc.payments.refund.succeeded',
    source: 'svc',
    account: '000000000000',
    time: new Date(SAMPLE_TIME).toISOString(),
    region: REGION,
    resources: [],
    detail: {
      uuid: SAMPLE_UUID,
      name: 'svc.payments.refund.succeeded',
      created: SAMPLE_TIME,
      object: 'refund',
      object_uuid: SAMPLE_REFUND,
      organisation_uuid: SAMPLE_ORGANISATION,
      sequence: 1,
      data: { uuid: SAMPLE_REFUND, payment_uuid: SAMPLE_UUID, status: 'succeeded' },
    } satisfies Envelope,
  }),
};

/** An S3 notification (an upload under the function's prefix) as the queue between them delivers it. */
function s3ViaSqsSample(fn: AppFunction, environment: Record<string, string>): SQSEvent {
  const bucket = environment.SVC_RECONCILIATION_BUCKET ?? 'svc-reconciliation';
  const notification: S3Event = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: REGION,
        eventTime: new Date(SAMPLE_TIME).toISOString(),
        eventName: 'ObjectCreated:Post',
        userIdentity: { principalId: 'SAMPLE' },
        requestParameters: { sourceIPAddress: '198.51.100.7' },
        responseElements: { 'x-amz-request-id': 'SAMPLE', 'x-amz-id-2': 'SAMPLE' },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'uploads',
          bucket: { name: bucket, ownerIdentity: { principalId: 'SAMPLE' }, arn: `arn:aws:s3:::${bucket}` },
          object: {
            key: `${fn.keyPrefix ?? ''}${SAMPLE_UUID}/sample.csv`,
            size: 0,
            eTag: 'd41d8cd98f00b204e9800998ecf8427e',
            sequencer: '0',
          },
        },
      },
    ],
  };
  return sqsEvent(notification, 'reconciliation-files');
}

/** A stream batch of one record: an organisation written for the first time (it passes every stream filter of ours). */
function streamSample(): DynamoDBStreamEvent {
  const organisation: Organisation = {
    uuid: SAMPLE_ORGANISATION,
    name: 'Sample Charity',
    created: SAMPLE_TIME,
    active: true,
    approval_status: 'approval_pending',
    merchant_category_code: '8398',
    locale: 'en',
    metadata: {},
    account_uuids: [],
  };
  const write = newOrganisationWrite(organisation, []);
  const item = 'Put' in write ? (write.Put?.Item ?? {}) : {};
  const image = marshall(item, { removeUndefinedValues: true }) as NonNullable<
    NonNullable<DynamoDBStreamEvent['Records'][number]['dynamodb']>['NewImage']
  >;
  return {
    Records: [
      {
        eventID: '1',
        eventName: 'INSERT',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: REGION,
        dynamodb: {
          ApproximateCreationDateTime: SAMPLE_TIME / 1000,
          Keys: { pk: image.pk ?? { S: '' }, sk: image.sk ?? { S: '' } },
          NewImage: image,
          SequenceNumber: '100000000000000000001',
          SizeBytes: JSON.stringify(image).length,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
        eventSourceARN: `arn:aws:dynamodb:${REGION}:000000000000:table/svc/stream/2026-01-15T09:30:00.000`,
      },
    ],
  };
}

/** The schedule's input with its context attributes filled in, as Scheduler delivers it. */
function scheduleSample(fn: AppFunction): unknown {
  if (!fn.scheduleInput) return {};
  return JSON.parse(
    fn.scheduleInput
      .replaceAll('<aws.scheduler.scheduled-time>', new Date(SAMPLE_TIME).toISOString())
      .replaceAll('<aws.scheduler.execution-id>', SAMPLE_UUID)
      .replaceAll('<aws.scheduler.schedule-arn>', `arn:aws:scheduler:${REGION}:000000000000:schedule/default/sample`)
      .replaceAll('<aws.scheduler.attempt-number>', '0'),
  );
}

/**
 * A custom resource's Delete, as the CDK provider framework hands it to the handler: a Create or
 * Update reaches Secrets Manager or the Data API, which have no local stand-in.
 */
function customResourceSample(fn: AppFunction): CloudFormationCustomResourceDeleteEvent {
  return {
    RequestType: 'Delete',
    ServiceToken: `arn:aws:lambda:${REGION}:000000000000:function:${fn.logicalId}`,
    ResponseURL: 'https://cloudformation-custom-resource-response.example.org/sample',
    StackId: `arn:aws:cloudformation:${REGION}:000000000000:stack/svc/${SAMPLE_UUID}`,
    RequestId: SAMPLE_UUID,
    LogicalResourceId: fn.logicalId,
    PhysicalResourceId: `sample:${fn.logicalId}`,
    ResourceType: 'Custom::Sample',
    ResourceProperties: { ServiceToken: `arn:aws:lambda:${REGION}:000000000000:function:${fn.logicalId}` },
  };
}

export function sampleEvent(fn: AppFunction, environment: Record<string, string> = {}): unknown {
  const samples: Record<EventKind, () => unknown> = {
    api: () => apiSample(fn),
    sqs: () => {
      const body = SQS_BODIES[fn.entry];
      if (!body)
        throw new Error(
          `No sample message for ${fn.path} (${fn.entry}): add one to SQS_BODIES in infra/invoke/samples.ts`,
        );
      return sqsEvent(body(), fn.path.split('/').slice(1).join('-'));
    },
    's3-via-sqs': () => s3ViaSqsSample(fn, environment),
    'dynamodb-stream': streamSample,
    schedule: () => scheduleSample(fn),
    'custom-resource': () => customResourceSample(fn),
  };
  return samples[fn.kind]();
}
