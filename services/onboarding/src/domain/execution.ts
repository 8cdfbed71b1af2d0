import {
  AppError,
  ConflictError,
  definedFields,
  ForbiddenError,
  hashSecret,
  logger,
  newUuid,
  now,
  parseOrThrow,
  TooManyRequestsError,
  UnprocessableError,
} from '@svc/core';
import { findClient, grantsChangeWrite } from '@svc/identity';
import { findOrganisation, onboardedOrganisationWrites } from '@svc/organisations';
import { type GuardedWrite, retryOnConflict, transactWrite, versioned } from '@svc/table';
import { initialWebhookWrites } from '@svc/webhooks';
import type { IntegrationRecord } from '../repository/integration-repository';
import { newIntegrationWrites } from '../repository/integration-repository';
import {
  executedProcessWrite,
  findProcess,
  type ProcessRecord,
  releaseAttempt,
  reserveAttempt,
} from '../repository/process-repository';
import { newUserWrites, type UserRecord } from '../repository/user-repository';
import { processEvents } from './process-events';
import { assertExecutable, readProcessByToken } from './processes';
import { completeOnboardingSchema, mergeOnboardingData, type OnboardRequest } from './rules';
import { authenticateUser } from './users';

/**
 * Executing a process (contract: `onboard` and `connect`). Everything one execution creates is
 * one transaction: the organisation (onboard), the user (onboard), the partner integration and
 * its link, the partner's grant, the initial webhooks (onboard) and the process's move from
 * `pending` to `succeeded` with its event. The process's condition makes a second execution a
 * 409, however the two race; the grant's version makes a concurrent grant change retry.
 * An unexpected failure marks the process `failed` (with its event), a
 * "technical error"; the partner starts a new process.
 */
const alreadyExecuted = () =>
  new ConflictError('This onboarding process has already been executed', 'error.onboarding.already_executed');

async function loadExecutable(token: string): Promise<ProcessRecord> {
  const record = await readProcessByToken(token);
  assertExecutable(record);
  return record;
}

async function partnerOf(record: ProcessRecord) {
  const client = await findClient(record.partner_client_id);
  if (!client?.partner) throw new Error(`The partner ${record.partner_client_id} of process ${record.uuid} is gone`);
  return { clientId: client.client_id, name: client.partner.name };
}

interface Execution {
  organisationUuid: string;
  accounts: Record<string, { uuid: string }>;
  user: UserRecord;
  /** What this execution creates besides the integration, the grant and the process. */
  writes: GuardedWrite[];
}

async function execute(record: ProcessRecord, plan: Execution): Promise<ProcessRecord> {
  return failingPermanently(record, async () => {
    const partner = await partnerOf(record);
    const at = now();
    const done: ProcessRecord = {
      ...record,
      status: 'succeeded',
      updated: at,
      results: {
        organisation: { uuid: plan.organisationUuid },
        accounts: plan.accounts,
        user: { uuid: plan.user.uuid },
      },
    };
    const events = processEvents(done, 'svc.onboarding.onboarding_process.succeeded');
    const alreadyConnected = () =>
      new ConflictError(
        `This organisation is already connected to ${partner.name}`,
        'error.onboarding.already_connected',
        'organisation_uuid',
      );
    await retryOnConflict(async () => {
      let grantAdded = false;
      const grants = await grantsChangeWrite(partner.clientId, (current) => {
        if (current.some((g) => g.organisation_uuid === plan.organisationUuid && g.account_uuid === undefined)) {
          return current;
        }
        if (current.length >= MAX_GRANTS_PER_CLIENT) throw grantLimitReached();
        grantAdded = true;
        return [...current, { organisation_uuid: plan.organisationUuid }];
      });
      const integration: IntegrationRecord = {
        uuid: record.partner_integration_uuid,
        partner_client_id: partner.clientId,
        partner_name: partner.name,
        onboarding_configuration_uuid: record.onboarding_configuration_uuid,
        onboarding_process_uuid: record.uuid,
        organisation_uuid: plan.organisationUuid,
        account_uuids: Object.values(plan.accounts).map((a) => a.uuid),
        status: 'active',
        grant_added: grantAdded,
        created: at,
      };
      const [integrationPut, linkPut] = newIntegrationWrites(integration);
      if (!integrationPut || !linkPut) throw new Error('An integration is written as two items');
      await transactWrite([
        { item: executedProcessWrite(done, events), onConditionFailed: alreadyExecuted },
        ...plan.writes,
        { item: integrationPut, onConditionFailed: alreadyExecuted },
        { item: linkPut, onConditionFailed: alreadyConnected },
        versioned(grants.item),
      ]);
    });
    return done;
  });
}

/**
 * A partner's grants live on its client item, which DynamoDB caps at 400 KB: past this many
 * organisations a partner gets a clear 422 instead of a failed write.
 */
export const MAX_GRANTS_PER_CLIENT = 2000;
const grantLimitReached = () =>
  new UnprocessableError(
    `The partner is connected to ${MAX_GRANTS_PER_CLIENT} organisations, the most one client can hold; ask the operator`,
    'error.onboarding.grant_limit',
  );

const TRANSIENT =
  /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|InternalServerError|ServiceUnavailable|TransactionConflict|TimeoutError|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE/;

/** Errors that may pass on their own: the process stays pending, the caller tries again. */
function isTransient(error: unknown): boolean {
  const e = error as { name?: string; code?: string; CancellationReasons?: Array<{ Code?: string }> };
  const reasons = (e.CancellationReasons ?? []).map((r) => r.Code ?? '').join(' ');
  return TRANSIENT.test(`${e.name ?? ''} ${e.code ?? ''} ${reasons}`);
}

/**
 * Runs an execution; an error that is neither the caller's (a domain error) nor transient is
 * a "technical error": the process is marked failed, with its event.
 */
async function failingPermanently<T>(record: ProcessRecord, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof AppError) && !isTransient(error)) await markFailed(record, error);
    throw error;
  }
}

/**
 * Guessing stops at the token: each refused credential, and each `onboard` refused because its
 * e-mail address has a user (which tells that the address is known), counts on the process; at
 * the limit the process fails (`too_many_attempts`) and its token is spent.
 */
export const MAX_FAILED_ATTEMPTS = 5;

/**
 * Runs one guess on a process: its attempt is reserved first (a conditional write, at most
 * MAX_FAILED_ATTEMPTS), so guesses sent at once past the bound are refused with 429 before any
 * password is verified; a refusal `isCounted` keeps the reservation (the one that takes the last
 * fails the process), anything else (the right password, a conflict) gives it back.
 */
export async function guardedGuess<T>(
  record: ProcessRecord,
  isCounted: (error: unknown) => boolean,
  run: () => Promise<T>,
): Promise<T> {
  const reserved = await reserveAttempt(record.uuid, MAX_FAILED_ATTEMPTS);
  if (reserved === undefined) {
    // Refused: the process ended meanwhile (409, as for any later request), or its guesses are
    // all taken (429; they free up only if one in flight turns out right).
    const current = await findProcess(record.uuid);
    if (current) assertExecutable(current);
    throw new TooManyRequestsError('Too many attempts on this onboarding process; it takes no more guesses', 1);
  }
  try {
    const result = await run();
    await releaseAttempt(record.uuid);
    return result;
  } catch (error) {
    if (!isCounted(error)) await releaseAttempt(record.uuid);
    else if (reserved >= MAX_FAILED_ATTEMPTS) {
      await markFailed({ ...record, failed_attempts: reserved }, undefined, 'too_many_attempts');
    }
    throw error;
  }
}

async function markFailed(
  record: ProcessRecord,
  cause: unknown,
  reason: 'technical_error' | 'too_many_attempts' = 'technical_error',
): Promise<void> {
  if (reason === 'technical_error') logger.error('Onboarding execution failed', { process: record.uuid, error: cause });
  const failed: ProcessRecord = { ...record, status: 'failed', updated: now(), failure_reason: reason };
  const events = processEvents(failed, 'svc.onboarding.onboarding_process.failed');
  try {
    await transactWrite([{ item: executedProcessWrite(failed, events) }]);
  } catch (error) {
    logger.error('Could not mark the onboarding process failed', { process: record.uuid, error });
  }
}

/** `onboard`: the body merged over the initialisation data must be complete (else 400). */
export async function executeOnboarding(token: string, body: OnboardRequest): Promise<ProcessRecord> {
  const record = await loadExecutable(token);
  const merged = mergeOnboardingData(
    { user: record.initialisation_data.user, organisation: record.initialisation_data.organisation } as Parameters<
      typeof mergeOnboardingData
    >[0],
    body,
  );
  const complete = parseOrThrow(completeOnboardingSchema, merged);
  const { user: person, organisation } = complete;
  const organisationUuid = newUuid();
  const accountUuid = newUuid();
  const user: UserRecord = {
    uuid: newUuid(),
    email: person.email,
    first_name: person.first_name,
    last_name: person.last_name,
    locale: person.locale,
    password_hash: await hashSecret(person.password),
    organisation_uuids: [organisationUuid],
    created: now(),
  };
  const userExists = () =>
    new ConflictError(
      'A user with this e-mail address exists; connect the organisation instead',
      'error.onboarding.user_exists',
      'user.email',
    );
  const [userPut, emailPut] = newUserWrites(user);
  if (!userPut || !emailPut) throw new Error('A user is written as two items');
  const organisationWrites = onboardedOrganisationWrites({
    uuid: organisationUuid,
    account_uuid: accountUuid,
    main_address_uuid: newUuid(),
    billing_address_uuid: newUuid(),
    name: organisation.name,
    merchant_category_code: organisation.merchant_category_code,
    locale: person.locale,
    main_address: organisation.main_address,
    billing_address: organisation.billing_address ?? organisation.main_address,
    billing: {
      iban: organisation.billing_information.iban,
      account_holder: organisation.billing_information.account_holder,
      ...(organisation.billing_information.bank_name ? { bank_name: organisation.billing_information.bank_name } : {}),
      recipient_email: person.email,
    },
    metadata: {
      onboarding_process_uuid: record.uuid,
      ...definedFields({ external_id: record.external_id }),
    },
  });
  const webhooks = await failingPermanently(record, () =>
    initialWebhookWrites(record.uuid, organisationUuid, record.initialisation_data.event_subscriptions ?? []),
  );
  return guardedGuess(record, refusal('error.onboarding.user_exists'), () =>
    execute(record, {
      organisationUuid,
      accounts: { main: { uuid: accountUuid } },
      user,
      writes: [
        ...organisationWrites.map((item) => ({ item })),
        { item: userPut },
        { item: emailPut, onConditionFailed: userExists },
        ...webhooks.map((item) => ({ item })),
      ],
    }),
  );
}

/** A refusal that tells an outsider something (see MAX_FAILED_ATTEMPTS): counted. */
const refusal =
  (counted: string | 403) =>
  (error: unknown): boolean =>
    error instanceof AppError &&
    (counted === 403 ? error.statusCode === 403 : error.details.some((d) => d.code === counted));

/** Connects an organisation the user belongs to (403 otherwise): the shared path of API and page. */
export async function connectOrganisation(
  record: ProcessRecord,
  user: UserRecord,
  organisationUuid: string,
): Promise<ProcessRecord> {
  assertExecutable(record);
  if (!user.organisation_uuids.includes(organisationUuid)) {
    throw new ForbiddenError('You do not belong to this organisation');
  }
  const organisation = await findOrganisation(organisationUuid);
  if (!organisation) throw new ForbiddenError('You do not belong to this organisation');
  const accounts = Object.fromEntries(
    organisation.account_uuids.map((uuid, index) => [index === 0 ? 'main' : `account_${index + 1}`, { uuid }]),
  );
  return execute(record, { organisationUuid, accounts, user, writes: [] });
}

/** `connect` (API): the e-mail and password of a user of that organisation (403 otherwise). */
export async function executeConnection(
  token: string,
  input: { email: string; password: string; organisation_uuid: string },
): Promise<ProcessRecord> {
  const record = await loadExecutable(token);
  // One reservation for the whole guess: the password and the organisation it names.
  return guardedGuess(record, refusal(403), async () => {
    const user = await authenticateUser(input.email, input.password);
    return connectOrganisation(record, user, input.organisation_uuid);
  });
}
