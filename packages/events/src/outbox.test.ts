import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, freezeClock, newUuid } from '@svc/core';
import { db, tableName, transactWrite } from '@svc/table';
import { describe, expect, it } from 'vitest';
import { canonicalEventName, EVENT_NAMES } from './names';
import { EVENTS_ATTRIBUTE, eventsOfChange, newEvent } from './outbox';

const read = async (pk: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: { pk, sk: 'THING' }, ConsistentRead: true }))).Item;

const approved = (uuid: string, sequence: number) =>
  newEvent({
    name: 'svc.organisations.organisation.approved',
    object: 'organisation',
    object_uuid: uuid,
    organisation_uuid: uuid,
    sequence,
  });

describe('events on the items they announce', () => {
  it('are written by the same item write as the change', async () => {
    freezeClock(1_800_000_000);
    const uuid = newUuid();
    const event = approved(uuid, 1);
    await transactWrite([
      { item: { Put: { Item: { pk: `THING#${uuid}`, sk: 'THING', state: 'approved', [EVENTS_ATTRIBUTE]: [event] } } } },
    ]);
    const stored = await read(`THING#${uuid}`);
    expect(stored?.state).toBe('approved');
    expect(stored?.[EVENTS_ATTRIBUTE]).toEqual([{ ...event, created: 1_800_000_000 }]);
  });

  it('are not written when the change is refused', async () => {
    const uuid = newUuid();
    await transactWrite([
      { item: { Put: { Item: { pk: `THING#${uuid}`, sk: 'THING', state: 'open', [EVENTS_ATTRIBUTE]: [] } } } },
    ]);
    const refused = transactWrite([
      {
        item: {
          Put: {
            Item: { pk: `THING#${uuid}`, sk: 'THING', state: 'paid', [EVENTS_ATTRIBUTE]: [approved(uuid, 1)] },
            ConditionExpression: '#state = :paid',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':paid': 'paid' },
          },
        },
        onConditionFailed: () => new ConflictError('not payable'),
      },
    ]);
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    expect(await read(`THING#${uuid}`)).toMatchObject({ state: 'open', [EVENTS_ATTRIBUTE]: [] });
  });

  it('are announced once per stream record: only those the old image did not carry', () => {
    const uuid = newUuid();
    const first = approved(uuid, 1);
    const second = approved(uuid, 2);
    expect(eventsOfChange({ events: [first] }, undefined)).toEqual([first]);
    expect(eventsOfChange({ events: [second] }, { events: [first] })).toEqual([second]);
    expect(eventsOfChange({ events: [first], other: 1 }, { events: [first] })).toEqual([]);
    expect(eventsOfChange({ events: [] }, { events: [first] })).toEqual([]);
    expect(eventsOfChange({ events: 'garbage' }, undefined)).toEqual([]);
  });
});

describe('event names', () => {
  it('accept every canonical name and the payment-gateway aliases, and nothing else', () => {
    for (const name of EVENT_NAMES) expect(canonicalEventName(name)).toBe(name);
    expect(canonicalEventName('svc.event.payment_gateway.payment.succeeded')).toBe('svc.payments.payment.succeeded');
    expect(canonicalEventName('svc.event.payment_gateway.refund.succeeded')).toBe('svc.payments.refund.succeeded');
    for (const bad of ['svc.event.payment_gateway.payment.exploded', 'svc.payments.payment', 'payment.succeeded', '']) {
      expect(canonicalEventName(bad)).toBeUndefined();
    }
  });
});
