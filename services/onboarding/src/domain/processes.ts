import {
  allowedIf,
  ConflictError,
  definedFields,
  ForbiddenError,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  type Principal,
  readFor,
  uuidSchema,
} from '@svc/core';
import { findClient, findPartnerByConfiguration } from '@svc/identity';
import { transactWrite } from '@svc/table';
import { checkInitialWebhookEvent, initialWebhookInput, sealInitialWebhooks } from '@svc/webhooks';
import * as z from 'zod';
import {
  findProcess,
  findProcessByToken,
  newProcessWrites,
  type ProcessRecord,
  processToken,
} from '../repository/process-repository';
import { processEvents } from './process-events';
import { onboardingOrganisationSchema, onboardingUserSchema } from './rules';

/** Processes expire this long after creation (contract: default 7 days). */
export const PROCESS_LIFETIME_SECONDS = 7 * 86_400;
/** At most this many webhooks per process (each becomes an endpoint and a subscription). */
export const MAX_INITIAL_WEBHOOKS = 20;

const initialisationData = z
  .object({
    user: onboardingUserSchema.optional(),
    organisation: onboardingOrganisationSchema.optional(),
    event_subscriptions: z.array(initialWebhookInput).max(MAX_INITIAL_WEBHOOKS).optional(),
  })
  .strict();

/**
 * Both request shapes of an onboarding process: A (flat `user` and `organisation`) and B (nested in
 * `initialisation_data`, the only place for `event_subscriptions`). Mixing them is refused, so a
 * value is never silently dropped.
 */
export const createProcessInput = z
  .object({
    onboarding_configuration_uuid: uuidSchema,
    external_id: z.string().trim().min(1).max(200).optional(),
    user: onboardingUserSchema.optional(),
    organisation: onboardingOrganisationSchema.optional(),
    initialisation_data: initialisationData.optional(),
  })
  .strict()
  .superRefine((input, context) => {
    if (input.initialisation_data && (input.user || input.organisation)) {
      context.addIssue({
        code: 'custom',
        path: ['initialisation_data'],
        message: 'Send user and organisation either flat (shape A) or inside initialisation_data (shape B), not both',
      });
    }
  });
export type CreateProcessInput = z.infer<typeof createProcessInput>;

/**
 * The calling partner's registration for this onboarding configuration: 404 when no partner
 * has it, 403 when another partner does or the caller is not a partner.
 */
async function partnerFor(caller: Principal, configurationUuid: string) {
  const client = await findClient(caller.clientId);
  if (client?.partner?.onboarding_configuration_uuid === configurationUuid) return client;
  if (!(await findPartnerByConfiguration(configurationUuid))) {
    throw new NotFoundError('Onboarding configuration not found');
  }
  throw new ForbiddenError('This onboarding configuration belongs to another partner');
}

export async function createProcess(principal: Promise<Principal>, input: CreateProcessInput): Promise<ProcessRecord> {
  const caller = await principal;
  const partner = await partnerFor(caller, input.onboarding_configuration_uuid);
  const data = input.initialisation_data ?? { user: input.user, organisation: input.organisation };
  const webhooks = input.initialisation_data?.event_subscriptions ?? [];
  for (const [index, entry] of webhooks.entries()) {
    checkInitialWebhookEvent(entry.event_name, `initialisation_data.event_subscriptions.${index}.event_name`);
  }
  const uuid = newResourceUuid('onboarding_process');
  // A re-run of a request that died after storing the process returns that process.
  const earlier = isResumedRequest() ? await findProcess(uuid) : undefined;
  if (earlier) return earlier;
  const at = now();
  const record: ProcessRecord = {
    uuid,
    partner_client_id: partner.client_id,
    ...(partner.partner?.organisation_uuid ? { partner_organisation_uuid: partner.partner.organisation_uuid } : {}),
    onboarding_configuration_uuid: input.onboarding_configuration_uuid,
    partner_integration_uuid: newResourceUuid('partner_integration'),
    status: 'pending',
    token: await processToken(uuid),
    expires_at: at + PROCESS_LIFETIME_SECONDS,
    created: at,
    updated: at,
    ...definedFields({ external_id: input.external_id }),
    initialisation_data: {
      ...definedFields({ user: data.user }),
      ...definedFields({ organisation: data.organisation }),
      ...(webhooks.length === 0 ? {} : { event_subscriptions: await sealInitialWebhooks(uuid, webhooks) }),
    },
    event_sequence: 0,
  };
  const events = processEvents(record, 'svc.onboarding.onboarding_process.created');
  await transactWrite((await newProcessWrites(record, events)).map((item) => ({ item })));
  return record;
}

/** The partner that created the process may read it; anyone else gets 403. */
export async function readProcess(principal: Promise<Principal>, uuid: string): Promise<ProcessRecord> {
  return readFor(
    principal,
    findProcess(uuid),
    'Onboarding process not found',
    allowedIf(
      (caller, found) => found.partner_client_id === caller.clientId,
      'This process belongs to another partner',
    ),
  );
}

/** The token is the credential: whoever holds it may read the process. */
export async function readProcessByToken(token: string): Promise<ProcessRecord> {
  const record = token.length <= 200 ? await findProcessByToken(token) : undefined;
  if (!record) throw new NotFoundError('Onboarding process not found');
  return record;
}

/** 409 unless the process can still be executed (contract: expired or already executed). */
export function assertExecutable(record: ProcessRecord): void {
  if (record.status !== 'pending') {
    throw new ConflictError(
      `This onboarding process has already been executed (${record.status})`,
      'error.onboarding.already_executed',
    );
  }
  if (now() >= record.expires_at) {
    throw new ConflictError('This onboarding process has expired', 'error.onboarding.expired');
  }
}
