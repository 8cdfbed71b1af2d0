import type { DynamoDBRecord } from 'aws-lambda';

/**
 * Reads DynamoDB Local's table stream over the DynamoDB Streams JSON protocol, keeping records
 * as the service sends them: that text is what Lambda's event source mapping hands a function
 * in AWS (attribute values as DynamoDB JSON, `ApproximateCreationDateTime` in seconds, binary
 * values in base64). The SDK's client would turn each record into typed objects (dates, byte
 * arrays) that the pipeline must not see, and that parse was the local pipeline's costliest step.
 *
 * DynamoDB Local checks only that a request names an access key (it runs with a shared database
 * and verifies no signature), so requests carry an unsigned SigV4-shaped Authorization header.
 */
export class StreamCallError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(`DynamoDB Streams ${type}: ${message}`);
  }
}

function endpoint(): string {
  const url = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (!url) throw new Error('AWS_ENDPOINT_URL_DYNAMODB is not set (DynamoDB Local)');
  return url;
}

async function streamCall<T>(operation: string, input: Record<string, unknown>): Promise<T> {
  const key = process.env.AWS_ACCESS_KEY_ID ?? 'local';
  const region = process.env.AWS_REGION ?? 'eu-central-2';
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
      authorization: `AWS4-HMAC-SHA256 Credential=${key}/20000101/${region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: JSON.stringify(input),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new StreamCallError(`HTTP ${response.status}`, text.slice(0, 200));
  }
  if (!response.ok) {
    // `__type` is "com.amazonaws.dynamodb.v20120810#ExpiredIteratorException" and the like.
    const type = String(body.__type ?? response.status).replace(/^.*#/, '');
    throw new StreamCallError(type, String(body.message ?? body.Message ?? text));
  }
  return body as T;
}

export async function streamShardIds(streamArn: string): Promise<string[]> {
  const out = await streamCall<{ StreamDescription?: { Shards?: Array<{ ShardId?: string }> } }>('DescribeStream', {
    StreamArn: streamArn,
  });
  return (out.StreamDescription?.Shards ?? []).flatMap((shard) => (shard.ShardId ? [shard.ShardId] : []));
}

/** An iterator at the shard's start, or just after a record already read. */
export async function shardIterator(
  streamArn: string,
  shardId: string,
  afterSequence?: string,
): Promise<string | undefined> {
  const out = await streamCall<{ ShardIterator?: string }>('GetShardIterator', {
    StreamArn: streamArn,
    ShardId: shardId,
    ...(afterSequence
      ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: afterSequence }
      : { ShardIteratorType: 'TRIM_HORIZON' }),
  });
  return out.ShardIterator;
}

/** One page of records, as Lambda would hand them over; no next iterator once the shard is closed. */
export async function streamRecords(
  iterator: string,
  limit = 1000,
): Promise<{ records: DynamoDBRecord[]; next: string | undefined }> {
  const out = await streamCall<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>('GetRecords', {
    ShardIterator: iterator,
    Limit: limit,
  });
  return { records: out.Records ?? [], next: out.NextShardIterator };
}
