import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, freezeClock, newUuid } from '@svc/core';
import { db, tableName, transactWrite } from '@svc/table';
import { describe, expect, it } from 'vitest';
import { canonicalEventName, EVENT_NAMES } from './names';
import { outboxWrite } from './outbox';

const read = async (pk: string, sk: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: { pk, sk }, ConsistentRead: true }))).Item;

describe('outbox', () => {
  it('writes the event in the same transaction as the state change', async () => {
    freezeClock(1_800_000_000);
    const objectUuid = newUuid();
    const { envelope, item } = outboxWrite({
      name: 'svc.organisations.organisation.approved',
      object: 'organisation',
      object_uuid: objectUuid,
      organisation_uuid: objectUuid,
      sequence: 1,
      data: { uuid: objectUuid, approval_status: 'approved' },
    });
    await transactWrite([
      { item: { Put: { Item: { pk: `THING#${objectUuid}`, sk: 'THING', state: 'approved' } } } },
      { item },
    ]);
    const stored = await read(`OUTBOX#${envelope.uuid}`, 'EVENT');
    expect(stored?.event).toEqual({ ...envelope, created: 1_800_000_000 });
    expect(stored?.ttl).toBe(1_800_000_000 + 7 * 24 * 3600);
  });

  it('writes neither the change nor the event when the change is refused', async () => {
    const objectUuid = newUuid();
    await transactWrite([{ item: { Put: { Item: { pk: `THING#${objectUuid}`, sk: 'THING', state: 'open' } } } }]);
    const { envelope, item } = outboxWrite({
      name: 'svc.subscriptions.invoice.paid',
      object: 'invoice',
      object_uuid: objectUuid,
      organisation_uuid: objectUuid,
      sequence: 2,
      data: {},
    });
    const change = {
      item: {
        Update: {
          Key: { pk: `THING#${objectUuid}`, sk: 'THING' },
          UpdateExpression: 'SET #state = :paid',
          ConditionExpression: '#state = :paid_already',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':paid': 'paid', ':paid_already': 'paid' },
        },
      },
      onConditionFailed: () => new ConflictError('not payable'),
    };
    await expect(transactWrite([change, { item }])).rejects.toBeInstanceOf(ConflictError);
    expect(await read(`OUTBOX#${envelope.uuid}`, 'EVENT')).toBeUndefined();
    expect((await read(`THING#${objectUuid}`, 'THING'))?.state).toBe('open');
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
