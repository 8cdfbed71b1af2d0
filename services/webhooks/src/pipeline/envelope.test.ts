import { marshall } from '@aws-sdk/util-dynamodb';
import type { StoredEvent } from '@svc/events';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { envelopesOf, useEventData } from './envelope';

/** `changed_by` rides on the stored event and reaches receivers inside `data` (contract section 12). */
describe('an event’s envelope', () => {
  let saved = {};
  beforeAll(() => {
    saved = useEventData({
      subscription: {
        schema: z.object({ uuid: z.string() }),
        build: async (_event, item) => ({ uuid: String(item.uuid) }),
      },
    });
  });
  afterAll(() => {
    useEventData(saved);
  });

  const event = (changed_by?: StoredEvent['changed_by']): StoredEvent => ({
    uuid: 'e1',
    name: 'svc.subscriptions.subscription.updated',
    created: 1,
    object: 'subscription',
    object_uuid: 's1',
    organisation_uuid: 'o1',
    sequence: 2,
    ...(changed_by ? { changed_by } : {}),
  });
  const record = (events: StoredEvent[]): DynamoDBRecord => ({
    dynamodb: {
      NewImage: marshall({ uuid: 's1', events }, { removeUndefinedValues: true }) as never,
    },
  });

  it('moves changed_by from the stored event into data, and leaves it out of the envelope', async () => {
    const [envelope] = await envelopesOf(record([event({ actor: 'supporter', channel: 'portal' })]));
    expect(envelope?.data).toEqual({ uuid: 's1', changed_by: { actor: 'supporter', channel: 'portal' } });
    expect(envelope).not.toHaveProperty('changed_by');
  });

  it('adds nothing to data for an event stored without it', async () => {
    const [envelope] = await envelopesOf(record([event()]));
    expect(envelope?.data).toEqual({ uuid: 's1' });
  });
});
