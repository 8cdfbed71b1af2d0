export type { EventData, EventDataBuilders } from './event-data';
export * from './names';
export * from './outbox';
export { itemFromStreamImage } from './stream-image';
