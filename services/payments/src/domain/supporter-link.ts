import { ValidationError } from '@svc/core';
import { findSupporter, supporterFromPaymentInput, supporterShape, supporterWrite } from '@svc/supporters';
import type { TransactItem } from '@svc/table';
import type { PaymentRequest } from './request';

export interface SupporterLink {
  supporter_uuid?: string;
  supporter?: Record<string, unknown>;
  write?: TransactItem;
}

/**
 * The donor of a payment: an existing supporter (by `supporter.uuid`), a new Supporter record
 * (`create_supporter: true`, written in the payment's own transaction), or only the details
 * kept on the payment.
 */
export async function linkSupporter(request: PaymentRequest, organisationUuid: string): Promise<SupporterLink> {
  const given = request.supporter;
  if (!given) {
    if (request.create_supporter) {
      throw ValidationError.field(
        'supporter',
        'error.validation.not_blank',
        'create_supporter needs a supporter object',
      );
    }
    return {};
  }
  if (given.uuid !== undefined) {
    const existing = typeof given.uuid === 'string' ? await findSupporter(given.uuid.toLowerCase()) : undefined;
    if (!existing || existing.organisation_uuid !== organisationUuid) {
      throw ValidationError.field(
        'supporter.uuid',
        'error.validation.not_valid',
        'No such supporter in this organisation',
      );
    }
    return { supporter_uuid: existing.uuid, supporter: supporterShape(existing) };
  }
  const record = supporterFromPaymentInput(organisationUuid, given);
  if (request.create_supporter) {
    return { supporter_uuid: record.uuid, supporter: supporterShape(record), write: await supporterWrite(record) };
  }
  const { uuid: _uuid, created: _created, organisation_uuid: _organisation, ...details } = supporterShape(record);
  return { supporter: details };
}
