export { ATTEMPT_LEASE_SECONDS, hmacHex, RETRY_DELAYS_SECONDS } from './domain/delivery';
export {
  DEFAULT_IN_FLIGHT_PER_ENDPOINT,
  DEFAULT_IN_FLIGHT_PER_ORGANISATION,
} from './domain/in-flight';
export {
  checkInitialWebhookEvent,
  INITIAL_WEBHOOK_EVENTS,
  type InitialWebhookInput,
  initialWebhookInput,
  initialWebhookWrites,
  type SealedInitialWebhook,
  sealInitialWebhooks,
} from './domain/initial-webhooks';
export {
  DEFAULT_DELIVERIES_PER_SECOND,
  forgetPacing,
  MAX_DELIVERIES_PER_SECOND,
} from './domain/pacing';
export { sweepDueDeliveries } from './handlers/delivery-sweeper';
export { processDeliveryBatch } from './handlers/delivery-worker';
export { fanOutMessages } from './handlers/fan-out';
export { webhooksRoutes } from './handlers/routes';
export { publishStreamRecords } from './handlers/stream-publisher';
export { useEventData } from './pipeline/envelope';
export { EVENT_SOURCE, resetBusClient } from './pipeline/publish';
export type { DeliveryMessage } from './pipeline/queue';
export { DELIVERY_MAX_RECEIVES, resetDeliveryQueueClient } from './pipeline/queue';
export { MAX_ENDPOINTS_PER_ORGANISATION, WEBHOOK_ENDPOINT_COUNT } from './repository/endpoint-count';
export {
  PACING_ATTRIBUTES,
  PACING_PREFIXES,
  WEBHOOK_IN_FLIGHT,
  WEBHOOK_PACE,
  WEBHOOK_PAUSE,
} from './repository/pace-repository';
export type { Envelope } from './repository/webhook-repository';
export {
  DELIVERY,
  DELIVERY_PARTITION_PREFIX,
  ENDPOINT,
  EVENT_SUBSCRIPTION,
  RESPONSE,
  WEBHOOK_URL,
  WORKER_BATCH_WRITE_PREFIXES,
} from './repository/webhook-repository';
