import { EVENTS_ATTRIBUTE } from '@svc/events';
import { IDEMPOTENCY_RECORD } from '@svc/http';
import { MAIL } from '@svc/mail';
import { PASSWORD_GUESSES } from '@svc/onboarding';
import { PROVIDER_HEALTH, PROVIDER_RATE } from '@svc/payments';
import { PORTAL_CODE, PORTAL_LOGIN_COUNT, PORTAL_SESSION } from '@svc/portal';
import { GIFT_AID_DECLARATION, GIFT_AID_TEXT, RECEIPT_BATCH, RECEIPT_OF, RECEIPT_SEQUENCE } from '@svc/receipts';
import {
  DELIVERY,
  RESPONSE,
  WEBHOOK_ENDPOINT_COUNT,
  WEBHOOK_IN_FLIGHT,
  WEBHOOK_PACE,
  WEBHOOK_PAUSE,
} from '@svc/webhooks';
import type { DynamoDBRecord } from 'aws-lambda';

/**
 * Item types that never carry events, written many times a second at a telethon: limiters
 * (provider and onboarding guess counts), pacing, health, in-flight slots, idempotency records,
 * deliveries, receivers' responses and outbox mails. The stream publisher's event source mapping
 * leaves them out (STREAM_PUBLISHER_FILTER), so they never invoke it. The local runtime applies the same filter and
 * refuses a left-out record that carries events (apps/local/src/stream-poller.ts), so every test
 * run checks that none of these ever does.
 */
export const QUIET_ENTITIES: readonly string[] = [
  PROVIDER_RATE,
  PROVIDER_HEALTH,
  PASSWORD_GUESSES,
  // The portal's login counts and sessions (a session's last_seen moves once a minute).
  PORTAL_LOGIN_COUNT,
  PORTAL_SESSION,
  // One-time codes (a guess counted per request).
  PORTAL_CODE,
  IDEMPOTENCY_RECORD,
  WEBHOOK_PACE,
  WEBHOOK_PAUSE,
  WEBHOOK_IN_FLIGHT,
  WEBHOOK_ENDPOINT_COUNT,
  DELIVERY,
  RESPONSE,
  // Outbox mails: a billing run's reminders are written by the thousand; none carries an event.
  MAIL,
  // A receipt batch's bookkeeping: one RECEIPT_OF per supporter, the sequence per transaction.
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  RECEIPT_BATCH,
  // Gift Aid declarations and their wording: no events.
  GIFT_AID_DECLARATION,
  GIFT_AID_TEXT,
].map((entity) => entity.description.name);

/**
 * The stream publisher's event filter (Lambda event filtering on a DynamoDB source, which
 * "only support[s] filtering on the `dynamodb` key",
 * https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html): a record whose new image
 * has an `entity` other than the quiet ones. `anything-but` takes a list of strings
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html, the
 * syntax Lambda's filters share). Left out as well: removals (no new image, nothing to publish)
 * and items without `entity` (the API limiter's windows, which carry no events): a pattern matches
 * a value the record has, and these have none. Should AWS match them after all, they would only
 * invoke the publisher for nothing, as every record does today; no event depends on it.
 */
export const STREAM_PUBLISHER_FILTER = {
  dynamodb: { NewImage: { entity: { S: [{ 'anything-but': [...QUIET_ENTITIES] }] } } },
} as const;

/** Whether STREAM_PUBLISHER_FILTER lets a record through, as the local runtime applies it. */
export function publisherTakes(record: DynamoDBRecord): boolean {
  const entity = (record.dynamodb?.NewImage as Record<string, { S?: unknown }> | undefined)?.entity?.S;
  return typeof entity === 'string' && !QUIET_ENTITIES.includes(entity);
}

/** Whether a record's new image carries events (the publisher's only input). */
export function carriesEvents(record: DynamoDBRecord): boolean {
  const image = record.dynamodb?.NewImage;
  return image !== undefined && EVENTS_ATTRIBUTE in image;
}
