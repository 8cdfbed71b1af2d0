import {
  type Assert,
  allowedIf,
  assertAccountGrant,
  assertOrganisationGrant,
  ConflictError,
  type Conforms,
  coversAccount,
  deferred,
  definedFields,
  ForbiddenError,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  type Principal,
  readFor,
  uuidSchema,
  ValidationError,
} from '@svc/core';
import { findAccount, findOrganisation } from '@svc/organisations';
import { type GuardedWrite, retryOnConflict, transactWrite, versioned } from '@svc/table';
import * as z from 'zod';
import type { Dunning, Notification, PlanRecord } from '../repository/records';
import {
  claimDefaultPlan,
  defaultPlanUuid,
  findPlan,
  planPut,
  plansOfOrganisation,
  releaseDefaultPlan,
} from '../repository/subscription-repository';

/**
 * Subscription plans: how a subscription's failed invoices are chased (dunning) and who hears of
 * it (notifications). Every organisation falls back to the global default plan until it marks
 * one of its own as default; an organisation has at most one default, guarded by a marker item.
 */
export const GLOBAL_DEFAULT_PLAN_UUID = '00000000-0000-4000-8000-000000000001';

export const DEFAULT_DUNNING: Dunning = {
  retry_delays_days: [2, 4, 6],
  max_consecutive_failed_invoices: 3,
  on_max_failed: 'cancel',
};
const DEFAULT_NOTIFICATION: Notification = { supporter_receipts: false, failure_recipient_emails: [] };

export interface GlobalPlan {
  uuid: string;
  name: string;
  is_default: true;
  global: true;
  dunning_configuration: Dunning;
  notification_configuration: Notification;
}

export const GLOBAL_DEFAULT_PLAN: GlobalPlan = {
  uuid: GLOBAL_DEFAULT_PLAN_UUID,
  name: 'Global default plan',
  is_default: true,
  global: true,
  dunning_configuration: DEFAULT_DUNNING,
  notification_configuration: DEFAULT_NOTIFICATION,
};

export type AnyPlan = PlanRecord | GlobalPlan;

export const dunningInput = deferred(() =>
  z
    .object({
      retry_delays_days: z.array(z.number().int().min(1).max(60)).max(10),
      max_consecutive_failed_invoices: z.number().int().min(1).max(100),
      on_max_failed: z.enum(['cancel', 'suspend']),
    })
    .partial()
    .strict(),
);

export const notificationInput = deferred(() =>
  z
    .object({
      supporter_receipts: z.boolean(),
      failure_recipient_emails: z.array(z.email().max(254)).max(10),
    })
    .partial()
    .strict(),
);

const planFields = () => ({
  account_uuid: uuidSchema.optional(),
  name: z.string().trim().min(1, 'This value should not be blank').max(200),
  is_default: z.boolean().optional(),
  dunning_configuration: dunningInput.optional(),
  notification_configuration: notificationInput.optional(),
});

export const createPlanInput = deferred(() => z.object({ organisation_uuid: uuidSchema, ...planFields() }).strict());
export const updatePlanInput = deferred(() =>
  z.object({ ...planFields(), name: planFields().name.optional() }).strict(),
);

/** A plan as the API answers it (the global default plan has no organisation, account or created). */
export const planResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string().optional(),
    account_uuid: z.string().optional(),
    name: z.string(),
    is_default: z.boolean(),
    dunning_configuration: z.object({
      retry_delays_days: z.array(z.number().int()),
      max_consecutive_failed_invoices: z.number().int(),
      on_max_failed: z.enum(['cancel', 'suspend']),
    }),
    notification_configuration: z.object({
      supporter_receipts: z.boolean(),
      failure_recipient_emails: z.array(z.string()),
    }),
    created: z.number().int().optional(),
  }),
);

type _Plan = Assert<Conforms<ReturnType<typeof planShape>, z.output<typeof planResponse>>>;

export function planShape(plan: AnyPlan) {
  if ('global' in plan) {
    const { global: _global, ...shape } = plan;
    return shape;
  }
  return {
    uuid: plan.uuid,
    organisation_uuid: plan.organisation_uuid,
    ...definedFields({ account_uuid: plan.account_uuid }),
    name: plan.name,
    is_default: plan.is_default,
    dunning_configuration: plan.dunning_configuration,
    notification_configuration: plan.notification_configuration,
    created: plan.created,
  };
}

function canSee(caller: Principal, plan: PlanRecord): boolean {
  return plan.account_uuid === undefined
    ? caller.grants.some((g) => g.organisation_uuid === plan.organisation_uuid)
    : coversAccount(caller, plan.organisation_uuid, plan.account_uuid);
}

/** The caller's plans: the global default first, then those of every organisation they reach. */
export async function listPlans(principal: Promise<Principal>, organisationUuid?: string): Promise<AnyPlan[]> {
  const caller = await principal;
  if (organisationUuid !== undefined) assertOrganisationGrant(caller, organisationUuid);
  const organisations =
    organisationUuid === undefined ? [...new Set(caller.grants.map((g) => g.organisation_uuid))] : [organisationUuid];
  const plans = (await Promise.all(organisations.map(plansOfOrganisation))).flat();
  return [
    GLOBAL_DEFAULT_PLAN,
    ...plans
      .filter((plan) => canSee(caller, plan))
      .sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid)),
  ];
}

export async function getPlan(principal: Promise<Principal>, uuid: string): Promise<AnyPlan> {
  if (uuid === GLOBAL_DEFAULT_PLAN_UUID) {
    await principal;
    return GLOBAL_DEFAULT_PLAN;
  }
  return readFor(principal, findPlan(uuid), 'Subscription plan not found', allowedIf(canSee));
}

async function checkAccount(organisationUuid: string, accountUuid: string | undefined): Promise<void> {
  if (accountUuid === undefined) return;
  const account = await findAccount(accountUuid);
  if (!account || account.organisation_uuid !== organisationUuid) {
    throw ValidationError.field('account_uuid', 'error.validation.not_valid', 'No such account in this organisation');
  }
}

const defaultTaken = () =>
  new ConflictError(
    'The organisation already has a default plan; set is_default to false on it first',
    'error.plan.default_exists',
    'is_default',
  );

export async function createPlan(
  principal: Promise<Principal>,
  input: z.infer<typeof createPlanInput>,
): Promise<PlanRecord> {
  const [caller, organisation] = await Promise.all([principal, findOrganisation(input.organisation_uuid)]);
  if (!organisation) throw new NotFoundError('Organisation not found');
  if (input.account_uuid === undefined) assertWholeOrganisation(caller, input.organisation_uuid);
  else assertAccountGrant(caller, input.organisation_uuid, input.account_uuid);
  await checkAccount(input.organisation_uuid, input.account_uuid);
  const uuid = newResourceUuid('subscription_plan');
  // A re-run of a request that died after storing the plan returns that plan.
  const earlier = isResumedRequest() ? await findPlan(uuid) : undefined;
  if (earlier) return earlier;
  const created = now();
  const plan: PlanRecord = {
    uuid,
    organisation_uuid: input.organisation_uuid,
    ...definedFields({ account_uuid: input.account_uuid }),
    name: input.name,
    is_default: input.is_default ?? false,
    dunning_configuration: { ...DEFAULT_DUNNING, ...input.dunning_configuration },
    notification_configuration: { ...DEFAULT_NOTIFICATION, ...input.notification_configuration },
    created,
    updated: created,
    version: 1,
  };
  assertDefaultIsOrganisationWide(plan);
  const writes: GuardedWrite[] = [{ item: planPut(plan) }];
  if (plan.is_default) writes.push({ item: claimDefaultPlan(plan), onConditionFailed: defaultTaken });
  await transactWrite(writes);
  return plan;
}

/**
 * The default is the organisation's fallback for every account, so only an organisation-wide
 * plan can be it (and only a caller with a grant on the whole organisation can set it).
 */
function assertDefaultIsOrganisationWide(plan: PlanRecord): void {
  if (plan.is_default && plan.account_uuid !== undefined) {
    throw ValidationError.field(
      'is_default',
      'error.validation.not_valid',
      'Only an organisation-wide plan (without account_uuid) can be the default',
    );
  }
}

/** Plans shape billing for the whole organisation unless scoped to an account. */
function assertWholeOrganisation(caller: Principal, organisationUuid: string): void {
  if (!caller.grants.some((g) => g.organisation_uuid === organisationUuid && g.account_uuid === undefined)) {
    throw new ForbiddenError('Organisation-wide plans need a grant on the whole organisation');
  }
}

export async function updatePlan(
  principal: Promise<Principal>,
  uuid: string,
  input: z.infer<typeof updatePlanInput>,
): Promise<PlanRecord> {
  if (uuid === GLOBAL_DEFAULT_PLAN_UUID) {
    await principal;
    throw new ForbiddenError('The global default plan cannot be changed; create a default plan of your own');
  }
  const caller = await principal;
  return retryOnConflict(
    async () => {
      const plan = await readFor(caller, findPlan(uuid), 'Subscription plan not found', allowedIf(canSee));
      const accountUuid = 'account_uuid' in input ? input.account_uuid : plan.account_uuid;
      if (accountUuid === undefined) assertWholeOrganisation(caller, plan.organisation_uuid);
      else assertAccountGrant(caller, plan.organisation_uuid, accountUuid);
      await checkAccount(plan.organisation_uuid, accountUuid);
      const next: PlanRecord = {
        ...plan,
        ...definedFields({ name: input.name }),
        is_default: input.is_default ?? plan.is_default,
        dunning_configuration: { ...plan.dunning_configuration, ...input.dunning_configuration },
        notification_configuration: { ...plan.notification_configuration, ...input.notification_configuration },
        updated: now(),
        version: plan.version + 1,
      };
      if (accountUuid === undefined) delete next.account_uuid;
      else next.account_uuid = accountUuid;
      assertDefaultIsOrganisationWide(next);
      const writes: GuardedWrite[] = [versioned(planPut(next, plan.version))];
      if (next.is_default && !plan.is_default) {
        writes.push({ item: claimDefaultPlan(next), onConditionFailed: defaultTaken });
      }
      if (!next.is_default && plan.is_default) writes.push({ item: releaseDefaultPlan(plan) });
      await transactWrite(writes);
      return next;
    },
    () => new ConflictError('Too many concurrent changes; try again'),
  );
}

/**
 * The plan a subscription uses: the one it names (the global default, or one of its
 * organisation's plans usable by its account), else the organisation's default, else the global.
 */
export async function resolvePlan(
  organisationUuid: string,
  accountUuid: string,
  planUuid: string | undefined,
  property = 'subscription_plan_uuid',
): Promise<AnyPlan> {
  if (planUuid === undefined) {
    const defaultUuid = await defaultPlanUuid(organisationUuid);
    const plan = defaultUuid === undefined ? undefined : await findPlan(defaultUuid);
    return plan ?? GLOBAL_DEFAULT_PLAN;
  }
  if (planUuid === GLOBAL_DEFAULT_PLAN_UUID) return GLOBAL_DEFAULT_PLAN;
  const plan = await findPlan(planUuid);
  if (
    !plan ||
    plan.organisation_uuid !== organisationUuid ||
    (plan.account_uuid !== undefined && plan.account_uuid !== accountUuid)
  ) {
    throw ValidationError.field(property, 'error.validation.not_valid', 'No such plan for this account');
  }
  return plan;
}

/** The plan's rules as the billing worker applies them; a deleted plan falls back to the global one. */
export async function planRules(planUuid: string): Promise<AnyPlan> {
  if (planUuid === GLOBAL_DEFAULT_PLAN_UUID) return GLOBAL_DEFAULT_PLAN;
  return (await findPlan(planUuid)) ?? GLOBAL_DEFAULT_PLAN;
}
