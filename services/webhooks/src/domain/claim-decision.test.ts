import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord, ResponseRecord } from '../repository/webhook-repository';
import { ATTEMPT_LEASE_SECONDS, decideClaim, MAX_ATTEMPTS, readsPreviousResponse } from './delivery';

/** The claim of a delivery's next attempt, decided without I/O (domain/delivery.ts decideClaim). */
const AT = 1_800_000_000;

function delivery(fields: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    uuid: 'd',
    organisation_uuid: 'o',
    endpoint_uuid: 'e',
    event: {} as DeliveryRecord['event'],
    attempts: 0,
    status: 'pending',
    created: AT - 100,
    updated: AT - 100,
    version: 3,
    ...fields,
  };
}

const response = (fields: Partial<ResponseRecord>) =>
  ({ sent_at: AT - 30, error: true, do_not_retry: false, ...fields }) as ResponseRecord;

describe('the claim decision', () => {
  it('starts a due delivery’s next attempt under a lease, in one write guarded by its version', () => {
    const decision = decideClaim(delivery({ attempts: 1, next_attempt_at: AT - 1 }), undefined, AT);
    expect(decision).toMatchObject({ kind: 'save', claim: true, logLost: false });
    if (decision.kind !== 'save') throw new Error('no write');
    expect(decision.next).toMatchObject({ attempts: 2, lease_until: AT + ATTEMPT_LEASE_SECONDS, version: 4 });
    expect(decision.next.next_attempt_at).toBeUndefined();
  });

  it('does nothing for a delivery not yet due, or under another worker’s lease', () => {
    expect(decideClaim(delivery({ next_attempt_at: AT + 10 }), undefined, AT).kind).toBe('none');
    expect(decideClaim(delivery({ attempts: 1, lease_until: AT + 5 }), undefined, AT).kind).toBe('none');
  });

  it('settles a lapsed attempt its response ended, logs one with no response, and keeps a failed one to the schedule', () => {
    const lapsed = delivery({ attempts: 2, lease_until: AT - 1 });
    expect(decideClaim(lapsed, response({ error: false }), AT)).toMatchObject({ kind: 'save', claim: false });
    expect(decideClaim(lapsed, undefined, AT)).toMatchObject({ kind: 'save', claim: true, logLost: true });
    const waiting = decideClaim(lapsed, response({ sent_at: AT - 10 }), AT);
    expect(waiting).toMatchObject({ kind: 'save', claim: false, next: { next_attempt_at: AT - 10 + 300 } });
  });

  it('leaves an attempt held by its message to its worker, and fails a delivery out of attempts', () => {
    const held = delivery({ attempts: 1, lease_until: AT + 30, held_by_message: true });
    expect(decideClaim(held, response({}), AT).kind).toBe('in_flight');
    const spent = decideClaim(delivery({ attempts: MAX_ATTEMPTS, lease_until: AT - 1 }), undefined, AT);
    expect(spent).toMatchObject({ kind: 'save', claim: false, logLost: true, next: { status: 'failed' } });
  });

  it('never claims an ended delivery, past the last attempt, or under a live unheld lease, and reads a response only when deciding needs it (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          attempts: fc.integer({ min: 0, max: MAX_ATTEMPTS + 1 }),
          status: fc.constantFrom('pending', 'delivered', 'failed', 'gone'),
          lease: fc.option(fc.integer({ min: -120, max: 120 }), { nil: undefined }),
          due: fc.option(fc.integer({ min: -120, max: 120 }), { nil: undefined }),
          held: fc.boolean(),
          previous: fc.option(
            fc.record({ ok: fc.boolean(), final: fc.boolean(), ago: fc.integer({ min: 0, max: 2000 }) }),
            {
              nil: undefined,
            },
          ),
        }),
        ({ attempts, status, lease, due, held, previous }) => {
          const read = delivery({
            attempts,
            status: status as DeliveryRecord['status'],
            ...(lease === undefined ? {} : { lease_until: AT + lease }),
            ...(due === undefined ? {} : { next_attempt_at: AT + due }),
            ...(held ? { held_by_message: true } : {}),
          });
          const record = previous
            ? response({
                sent_at: AT - previous.ago,
                error: !previous.ok,
                do_not_retry: previous.final,
              })
            : undefined;
          const decision = decideClaim(read, readsPreviousResponse(read, AT) ? record : undefined, AT);
          if (decision.kind === 'save') {
            expect(decision.next.version).toBe(read.version + 1);
            if (decision.claim) {
              expect(read.status).toBe('pending');
              expect(read.attempts).toBeLessThan(MAX_ATTEMPTS);
              expect((read.lease_until ?? 0) > AT && !read.held_by_message).toBe(false);
              expect(decision.next.attempts).toBe(read.attempts + 1);
            }
          }
          if (read.status !== 'pending') expect(decision.kind).toBe('none');
        },
      ),
      { numRuns: 500 },
    );
  });
});
