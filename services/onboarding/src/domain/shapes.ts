import { definedFields, now } from '@svc/core';
import type { IntegrationRecord } from '../repository/integration-repository';
import type { ProcessRecord } from '../repository/process-repository';

/** Where the hosted page lives: `SVC_CONNECT_URL`, else the service's own `/connect`. */
export function connectUrl(baseUrl: string | undefined): string | undefined {
  return process.env.SVC_CONNECT_URL ?? (baseUrl ? `${baseUrl.replace(/\/$/, '')}/connect` : undefined);
}

export function onboardingUrl(record: ProcessRecord, baseUrl: string | undefined): string | undefined {
  const base = connectUrl(baseUrl);
  return base ? `${base}?token=${encodeURIComponent(record.token)}` : undefined;
}

/**
 * The process as the API returns it. `label` mirrors `status`; `expired` is
 * read from the service clock. Webhook passwords and HMAC keys given at creation are write-only.
 */
export function processShape(record: ProcessRecord, baseUrl?: string) {
  const url = onboardingUrl(record, baseUrl);
  const data = record.initialisation_data;
  return {
    uuid: record.uuid,
    onboarding_configuration_uuid: record.onboarding_configuration_uuid,
    partner_integration_uuid: record.partner_integration_uuid,
    label: record.status,
    status: record.status,
    token: record.token,
    expires_at: record.expires_at,
    expired: now() >= record.expires_at,
    created: record.created,
    ...definedFields({ external_id: record.external_id }),
    initialisation_data: {
      ...definedFields({ organisation: data.organisation }),
      ...definedFields({ user: data.user }),
      ...(data.event_subscriptions === undefined
        ? {}
        : {
            event_subscriptions: data.event_subscriptions.map((entry) => ({
              event_name: entry.event_name,
              endpoint: entry.endpoint,
              ...definedFields({ username: entry.username }),
            })),
          }),
    },
    ...definedFields({ results: record.results }),
    ...definedFields({ onboarding_url: url }),
  };
}

export function integrationShape(record: IntegrationRecord) {
  return {
    uuid: record.uuid,
    status: record.status,
    organisation_uuid: record.organisation_uuid,
    accounts: record.account_uuids.map((uuid) => ({ uuid })),
    onboarding_configuration_uuid: record.onboarding_configuration_uuid,
    onboarding_process_uuid: record.onboarding_process_uuid,
    partner: { name: record.partner_name },
    created: record.created,
    ...definedFields({ disabled_at: record.disabled_at }),
  };
}
