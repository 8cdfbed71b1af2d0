import { assertOperator, ConflictError, NotFoundError, type Principal } from '@svc/core';
import { type EventName, newEvent, type StoredEvent } from '@svc/events';
import { retryOnConflict, transactWrite, versioned } from '@svc/table';
import { findOrganisation, type Organisation, organisationApprovalWrite } from '../repository/organisation-repository';

/**
 * Organisation approval. Onboarding creates organisations
 * `approval_pending`; an operator approves or declines them. The transitions:
 *
 * | from             | approve  | decline  |
 * |------------------|----------|----------|
 * | approval_pending | approved | declined |
 * | approved         | 409      | declined |
 * | declined         | approved | 409      |
 *
 * Each change is one item update guarded by the status it was decided on, and it carries its
 * event (`approved` / `declined`), so two operators racing get one change and one 409.
 */
export type ApprovalStatus = Organisation['approval_status'];
type Decision = 'approve' | 'decline';

const TARGET: Record<Decision, { status: ApprovalStatus; event: EventName; from: ApprovalStatus[] }> = {
  approve: {
    status: 'approved',
    event: 'svc.organisations.organisation.approved',
    from: ['approval_pending', 'declined'],
  },
  decline: {
    status: 'declined',
    event: 'svc.organisations.organisation.declined',
    from: ['approval_pending', 'approved'],
  },
};

/** The event an organisation item carries for a change of its approval (sequence counted on the item). */
export function organisationEvent(organisation: Organisation, name: EventName): StoredEvent {
  return newEvent({
    name,
    object: 'organisation',
    object_uuid: organisation.uuid,
    organisation_uuid: organisation.uuid,
    sequence: (organisation.event_sequence ?? 0) + 1,
  });
}

export async function decideApproval(principal: Promise<Principal>, uuid: string, decision: Decision) {
  assertOperator(await principal);
  const target = TARGET[decision];
  return retryOnConflict(async () => {
    const organisation = await findOrganisation(uuid);
    if (!organisation) throw new NotFoundError('Organisation not found');
    if (!target.from.includes(organisation.approval_status)) {
      throw new ConflictError(
        `The organisation is ${organisation.approval_status}; it cannot be ${target.status} now`,
        'error.organisation.invalid_approval_state',
        'approval_status',
      );
    }
    const event = organisationEvent(organisation, target.event);
    await transactWrite([versioned(organisationApprovalWrite(organisation, target.status, event))]);
    return {
      ...organisation,
      approval_status: target.status,
      event_sequence: event.sequence,
      version: (organisation.version ?? 0) + 1,
    };
  });
}
