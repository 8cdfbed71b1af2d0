import { type EventName, newEvent, type StoredEvent } from '@svc/events';
import type { ProcessRecord } from '../repository/process-repository';

/**
 * Onboarding events go to the partner's own organisation, where it subscribes
 * through its webhook settings. A partner registered without one gets no onboarding events (no
 * subscription could match them); the process itself is unaffected.
 */
export function processEvents(process: ProcessRecord, name: EventName): StoredEvent[] {
  if (!process.partner_organisation_uuid) return [];
  process.event_sequence += 1;
  return [
    newEvent({
      name,
      object: 'onboarding_process',
      object_uuid: process.uuid,
      organisation_uuid: process.partner_organisation_uuid,
      sequence: process.event_sequence,
    }),
  ];
}
