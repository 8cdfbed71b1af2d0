import type { Migration } from './index';

/**
 * Payments' fee cover (issue 48 point 1) and what receipts read (point 2), as typed columns of
 * `payment_search`:
 *
 * - `fee_cover_minor`: what the donor added to cover the fees (0 without a cover: the default,
 *   so rows written before, and by a function not yet updated while a deploy rolls, are right);
 * - `intended_amount_minor`: the gift, computed by the engine from the two (never out of step);
 * - `supporter_uuid` (copied from the documents already stored) and `succeeded_at` (Unix seconds
 *   the payment first succeeded; NULL for payments that succeeded before the service kept it, and
 *   for those that have not).
 *
 * Receipts read one organisation's succeeded payments by supporter and by when they succeeded:
 * one partial index serves a supporter's year and a walk over all supporters in order.
 */
export const m0003PaymentFeeCoverColumns: Migration = {
  version: 3,
  name: 'payment fee cover, supporter and succeeded_at columns',
  statements: [
    `ALTER TABLE payment_search ADD COLUMN IF NOT EXISTS fee_cover_minor bigint NOT NULL DEFAULT 0`,
    `ALTER TABLE payment_search ADD COLUMN IF NOT EXISTS intended_amount_minor bigint
       GENERATED ALWAYS AS (amount_minor - fee_cover_minor) STORED`,
    `ALTER TABLE payment_search ADD COLUMN IF NOT EXISTS supporter_uuid text COLLATE "C"`,
    `ALTER TABLE payment_search ADD COLUMN IF NOT EXISTS succeeded_at bigint`,
    `UPDATE payment_search SET supporter_uuid = document ->> 'supporter_uuid'
       WHERE supporter_uuid IS NULL AND jsonb_typeof(document -> 'supporter_uuid') = 'string'`,
    `CREATE INDEX IF NOT EXISTS payment_search_supporter_succeeded
       ON payment_search (organisation_uuid, supporter_uuid, succeeded_at)
       WHERE succeeded_at IS NOT NULL`,
  ],
};
