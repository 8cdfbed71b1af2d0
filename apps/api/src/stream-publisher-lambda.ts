import { workerHandler } from '@svc/core';
import { publishStreamRecords } from '@svc/webhooks';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { wireEventData } from './wiring-event-data';

/**
 * The stream publisher's Lambda entry: the webhooks publisher, with every domain's event-data
 * builders handed over first.
 */
wireEventData();

export const handler = workerHandler(
  'stream-publisher',
  async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => (await publishStreamRecords(event)).response,
);
