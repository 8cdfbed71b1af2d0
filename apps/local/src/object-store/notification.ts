import type { S3EventRecord } from 'aws-lambda';
import type { ObjectInfo } from './storage';

/**
 * S3 event notification records for created objects, shaped like the ones S3 delivers to Lambda
 * ("Event message structure", version 2.1), so the processing handler gets the same input
 * locally as in AWS.
 */
export type ObjectCreatedEvent = 'ObjectCreated:Put' | 'ObjectCreated:Post';

export interface CreatedObject {
  event: ObjectCreatedEvent;
  info: ObjectInfo;
  region: string;
  /** Unix milliseconds (the service clock). */
  eventTime: number;
  principalId: string;
  sourceIp: string;
  requestId: string;
}

/**
 * Keys in notifications are URL-encoded the way S3 does it (form encoding: space as `+`, UTF-8
 * bytes as `%XX`; `/` kept), so a consumer decodes them with
 * `decodeURIComponent(key.replace(/\+/g, ' '))`.
 */
export function encodeNotificationKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/[!'()~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
    .replace(/%2F/g, '/');
}

/** Sequencers only grow, so a consumer can order events of one key as S3 promises. */
export function createSequencer(): () => string {
  let next = BigInt(Date.now()) * 1_000_000n;
  return () => {
    next += 1n;
    return next.toString(16).toUpperCase().padStart(18, '0');
  };
}

export function objectCreatedRecord(created: CreatedObject, sequencer: string): S3EventRecord {
  const { info } = created;
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: created.region,
    eventTime: new Date(created.eventTime).toISOString(),
    eventName: created.event,
    userIdentity: { principalId: created.principalId },
    requestParameters: { sourceIPAddress: created.sourceIp },
    responseElements: { 'x-amz-request-id': created.requestId, 'x-amz-id-2': created.requestId },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'local-object-created',
      bucket: { name: info.bucket, ownerIdentity: { principalId: 'local' }, arn: `arn:aws:s3:::${info.bucket}` },
      // A versioned bucket's notifications name the version ("versionId: object version if bucket
      // is versioning-enabled, otherwise null", Event message structure,
      // https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
      object: {
        key: encodeNotificationKey(info.key),
        size: info.size,
        eTag: info.md5,
        versionId: info.versionId,
        sequencer,
      },
    },
  };
}
