import { workerHandler } from '@svc/core';
import { publishStreamRecords } from '@svc/webhooks';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { wireDomains } from './wiring';

/**
 * The stream publisher's Lambda entry: the webhooks publisher, with every domain's event-data
 * builders handed over first.
 */
wireDomains();

export const handler = workerHandler(
  'stream-publisher',
  async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => (await publishStreamRecords(event)).response,
);
