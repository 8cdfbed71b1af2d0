export { type EventData, type EventDataBuilders, eventData } from './event-data';
export * from './names';
export * from './outbox';
export { itemFromStreamImage } from './stream-image';
