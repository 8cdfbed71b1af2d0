import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { FilteredEventsError, recordsForPublisher } from './stream-poller';

const record = (sequence: string, image: Record<string, unknown> | undefined): DynamoDBRecord => ({
  eventName: image ? 'MODIFY' : 'REMOVE',
  dynamodb: {
    SequenceNumber: sequence,
    Keys: { pk: { S: `PK#${sequence}` }, sk: { S: 'SK' } },
    ...(image ? { NewImage: image as never } : {}),
  },
});
const event = { L: [{ M: { uuid: { S: 'e1' } } }] };

describe('the stream publisher’s filter, as the local runtime applies it (issue 46, point 7)', () => {
  it('passes items that can carry events and leaves out quiet ones, removals and untyped items', () => {
    const payment = record('1', { entity: { S: 'payment' }, events: event });
    const pace = record('2', { entity: { S: 'webhook_pace' }, count: { N: '3' } });
    const rate = record('3', { entity: { S: 'provider_rate' }, count: { N: '1' } });
    const window = record('4', { count: { N: '1' } });
    const removed = record('5', undefined);
    const subscription = record('6', { entity: { S: 'subscription' } });
    expect(recordsForPublisher([payment, pace, rate, window, removed, subscription])).toEqual([payment, subscription]);
  });

  it('refuses a left-out record that carries events: in AWS they would never be published', () => {
    const delivery = record('7', { entity: { S: 'delivery' }, events: event });
    expect(() => recordsForPublisher([delivery])).toThrow(FilteredEventsError);
    expect(() => recordsForPublisher([record('8', { events: event })])).toThrow(/untyped item carries events/);
  });
});
