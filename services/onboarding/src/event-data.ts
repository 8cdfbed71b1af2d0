import { registerEventData } from '@svc/webhooks';
import { processShape } from './domain/shapes';
import { processRecordSchema, processToken } from './repository/process-repository';

/**
 * The `data` of onboarding events: the process as its GET returns it, from the written item.
 * Webhooks cannot import onboarding (onboarding builds on webhooks), so whoever runs the
 * stream publisher registers this: its Lambda entry and the local runtime.
 */
export function registerOnboardingEventData(): void {
  registerEventData('onboarding_process', async (_event, item) =>
    processShape(processRecordSchema.parse({ token: await processToken(String(item.uuid)), ...item }), undefined),
  );
}
