import { workerHandler } from '@svc/core';
import { registerOnboardingEventData } from '@svc/onboarding';
import { publishStreamRecords } from '@svc/webhooks';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';

/**
 * The stream publisher's Lambda entry: the webhooks publisher, with the event shapes of the
 * capabilities built on webhooks registered first.
 */
registerOnboardingEventData();

export const handler = workerHandler(
  'stream-publisher',
  async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => (await publishStreamRecords(event)).response,
);
