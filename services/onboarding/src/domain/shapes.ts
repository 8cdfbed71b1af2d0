import { type Assert, type Conforms, deferred, definedFields, now } from '@svc/core';
import * as z from 'zod';
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

const freeJson = () => z.record(z.string(), z.unknown());

/** The schema of the process as the API returns it (see processShape); `deferred`, like every response schema. */
export const processResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    onboarding_configuration_uuid: z.string(),
    partner_integration_uuid: z.string(),
    label: z.enum(['pending', 'succeeded', 'failed']),
    status: z.enum(['pending', 'succeeded', 'failed']),
    token: z.string(),
    expires_at: z.number().int(),
    expired: z.boolean(),
    created: z.number().int(),
    external_id: z.string().optional(),
    initialisation_data: z.object({
      organisation: freeJson().optional(),
      user: freeJson().optional(),
      event_subscriptions: z
        .array(z.object({ event_name: z.string(), endpoint: z.string(), username: z.string().optional() }))
        .optional(),
    }),
    results: z
      .object({
        organisation: z.object({ uuid: z.string() }),
        accounts: z.record(z.string(), z.object({ uuid: z.string() })),
        user: z.object({ uuid: z.string() }),
      })
      .optional(),
    onboarding_url: z.string().optional(),
  }),
);

/** A partner integration: the partner's connection to an organisation it onboarded. */
export const integrationResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    status: z.enum(['active', 'disabled']),
    organisation_uuid: z.string(),
    accounts: z.array(z.object({ uuid: z.string() })),
    onboarding_configuration_uuid: z.string(),
    onboarding_process_uuid: z.string(),
    partner: z.object({ name: z.string() }),
    created: z.number().int(),
    disabled_at: z.number().int().optional(),
  }),
);

type _Process = Assert<Conforms<ReturnType<typeof processShape>, z.output<typeof processResponse>>>;
type _Integration = Assert<Conforms<ReturnType<typeof integrationShape>, z.output<typeof integrationResponse>>>;

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
