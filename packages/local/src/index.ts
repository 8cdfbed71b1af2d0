export * from './background';
export { assertJava, freePort, startDynamoDbLocal } from './dynamodb-local';
export { readSettings, useLocalAws } from './environment';
export { createGateway, type Gateway, type GatewayResponse } from './gateway';
export { startService } from './runtime';
