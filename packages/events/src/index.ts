export * from './names';
export * from './outbox';
export { itemFromStreamImage } from './stream-image';
