import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resetDbClient } from '@svc/table';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adoptTable, restoreTable } from '../apps/ops/src/table-recovery';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * The runbook's restore, tried locally (docs/operations.md, "Restoring the table"): the table is
 * restored into a new one (locally a copy stands in for DynamoDB's point-in-time restore), adopted
 * (stream and TTL, which a restore does not bring), and the service runs on it: a webhook's sealed
 * HMAC key opens with the kept key, and a payment sent again with its Idempotency-Key is the
 * replay of the first, found through the kept hash key. Nothing is created twice.
 */
const original = process.env.SVC_TABLE_NAME as string;
const restored = `${original}-restored`;
let token: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
});

afterAll(() => {
  process.env.SVC_TABLE_NAME = original;
  resetDbClient();
});

describe('restoring the table into a stage', () => {
  it('brings back webhook credentials and idempotency records the service reads as before', async () => {
    const webhook = await call('POST', '/webhooks', {
      token,
      body: { organisation_uuid: DEMO.org, endpoint: 'https://receiver.example.org/hook' },
    });
    expect(webhook.status, webhook.text).toBe(201);
    const hmacKey = webhook.json.hmac_key as string;
    expect(hmacKey).toMatch(/.{16,}/);
    const key = `restore-${Date.now()}`;
    const paid = await call('POST', '/payments', {
      token,
      body: cardPaymentBody(),
      headers: { 'idempotency-key': key },
    });
    expect(paid.status, paid.text).toBe(201);

    const lines: string[] = [];
    expect(await restoreTable({ table: restored }, (line) => lines.push(line))).toBe(restored);
    const adopted = await adoptTable(
      { table: restored },
      (line) => lines.push(line),
      async () => undefined,
    );
    expect(lines.join('\n')).toContain(`SVC_TABLE_NAME=${restored} pnpm start`);

    // What a restore leaves out, adopt put back.
    const dynamo = new DynamoDBClient({});
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: restored }));
    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(adopted.streamArn).toBe(Table?.LatestStreamArn);
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(['due', 'gsi1', 'gsi2']);
    const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: restored }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'ttl' });
    dynamo.destroy();

    // The service on the restored table.
    process.env.SVC_TABLE_NAME = restored;
    resetDbClient();
    const read = await call('GET', `/webhooks/${webhook.json.uuid}`, { token });
    expect(read.status, read.text).toBe(200);
    expect(read.json.hmac_key).toBe(hmacKey);
    const again = await call('POST', '/payments', {
      token,
      body: cardPaymentBody(),
      headers: { 'idempotency-key': key },
    });
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.uuid).toBe(paid.json.uuid);
  });

  it('refuses to restore a table onto itself', async () => {
    await expect(restoreTable({ table: process.env.SVC_TABLE_NAME }, () => undefined)).rejects.toThrow(/new table/);
  });
});
