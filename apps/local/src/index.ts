export { type IncomingRequest, toApiGatewayEvent } from './api-gateway-event';
export * from './background';
export { assertJava, freePort, startDynamoDbLocal } from './dynamodb-local';
export {
  type LocalSettings,
  localHashKey,
  type RuntimeFile,
  readRuntimeFile,
  readSettings,
  useLocalAws,
} from './environment';
export { createGateway, type Gateway, type GatewayResponse } from './gateway';
export { type ObjectStore, startObjectStore } from './object-store';
export { toRecord } from './queues';
export { compileRoutes } from './route-matcher';
export { type LocalStores, startLocalStores, startService } from './runtime';
