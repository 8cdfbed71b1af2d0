import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sdkClient } from '@svc/core';

/**
 * The one table client. The SDK finds DynamoDB Local through the standard
 * AWS_ENDPOINT_URL_DYNAMODB variable, so production code has no local branch.
 */
let documentClient: DynamoDBDocumentClient | undefined;

export function db(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(sdkClient(new DynamoDBClient({ maxAttempts: 4 })), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });
  return documentClient;
}

/** For tests and the local runtime when the endpoint or table changes under one process. */
export function resetDbClient(): void {
  documentClient?.destroy();
  documentClient = undefined;
}
