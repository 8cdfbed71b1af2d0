import { wireEventData } from './wiring-event-data';
import { wirePayments } from './wiring-payments';

/**
 * The links between domains that would otherwise be imports against the layering, made once per
 * process by each composition root: payments reaches subscriptions through its port
 * (`wirePayments`, the payments and resolver entries), and the stream publisher builds each
 * event's `data` with the owning domain's builder (`wireEventData`, its entry). The local runtime
 * and the tests run everything, so they make both. Idempotent. Each entry imports only the half
 * it needs, so no bundle carries domains it never calls.
 */
export function wireDomains(): void {
  wirePayments();
  wireEventData();
}
