import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { asFunction, currentFunction, newUuid } from '@svc/core';
import { describe, expect, it, vi } from 'vitest';
import { getItem } from './batch-get';
import { db } from './client';
import { tableName } from './definition';

async function put(pk: string, value: number) {
  await db().send(new PutCommand({ TableName: tableName(), Item: { pk, sk: 'X', value } }));
}

describe('coalesced point reads', () => {
  it('send the reads of one turn as one BatchGetItem and give each caller its own item', async () => {
    const keys = Array.from({ length: 5 }, () => `ITEM#${newUuid()}`);
    await Promise.all(keys.map((pk, i) => put(pk, i)));
    const send = vi.spyOn(db(), 'send');
    try {
      const items = await Promise.all(
        [...keys, 'ITEM#missing', keys[0] as string].map((pk) => getItem({ pk, sk: 'X' })),
      );
      expect(items.map((item) => item?.value)).toEqual([0, 1, 2, 3, 4, undefined, 0]);
      expect(send).toHaveBeenCalledTimes(1);
      expect(send.mock.calls[0]?.[0].constructor.name).toBe('BatchGetCommand');
    } finally {
      send.mockRestore();
    }
  });

  it('never carry one function’s keys in another’s call when one process runs several (the local runtime, the tests)', async () => {
    const [a, b] = [`ITEM#${newUuid()}`, `ITEM#${newUuid()}`];
    await Promise.all([put(a, 1), put(b, 2)]);
    const send = vi.spyOn(db(), 'send');
    try {
      const seen: Array<[string | undefined, string[]]> = [];
      send.mockImplementation((async (command: { input: Record<string, unknown> }) => {
        const input = command.input as {
          Key?: { pk: string };
          RequestItems?: Record<string, { Keys: Array<{ pk: string }> }>;
        };
        const keys = input.Key
          ? [input.Key.pk]
          : Object.values(input.RequestItems ?? {}).flatMap((r) => r.Keys.map((k) => k.pk));
        seen.push([currentFunction(), keys]);
        return { Item: undefined, Responses: {} };
      }) as never);
      await Promise.all([
        asFunction('payments', () => getItem({ pk: a, sk: 'X' })),
        asFunction('supporters', () => getItem({ pk: b, sk: 'X' })),
        asFunction('payments', () => getItem({ pk: b, sk: 'X' })),
      ]);
      expect(seen.sort()).toEqual([
        ['payments', [a, b]],
        ['supporters', [b]],
      ]);
    } finally {
      send.mockRestore();
    }
  });

  it('split more than 100 keys into several batches', async () => {
    const keys = Array.from({ length: 130 }, () => `ITEM#${newUuid()}`);
    await Promise.all(keys.map((pk, i) => put(pk, i)));
    const items = await Promise.all(keys.map((pk) => getItem({ pk, sk: 'X' })));
    expect(items.map((item) => item?.value)).toEqual(keys.map((_, i) => i));
  });

  it('use a plain strongly consistent GetItem for a lone read', async () => {
    const pk = `ITEM#${newUuid()}`;
    await put(pk, 2);
    const send = vi.spyOn(db(), 'send');
    try {
      expect((await getItem({ pk, sk: 'X' }))?.value).toBe(2);
      expect(send).toHaveBeenCalledTimes(1);
      const command = send.mock.calls[0]?.[0] as { constructor: { name: string }; input: { ConsistentRead?: boolean } };
      expect(command.constructor.name).toBe('GetCommand');
      expect(command.input.ConsistentRead).toBe(true);
    } finally {
      send.mockRestore();
    }
  });
});

describe('a bad key in a batch', () => {
  it('fails only its own read, not the others coalesced with it', async () => {
    const good = `ITEM#${newUuid()}`;
    await put(good, 7);
    const results = await Promise.allSettled([
      getItem({ pk: good, sk: 'X' }),
      getItem({ pk: 'X'.repeat(3000), sk: 'X' }),
      getItem({ pk: good, sk: 'X' }),
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: expect.objectContaining({ value: 7 }) });
    expect(results[1]?.status).toBe('rejected');
    expect(results[2]).toEqual({ status: 'fulfilled', value: expect.objectContaining({ value: 7 }) });
  });
});
