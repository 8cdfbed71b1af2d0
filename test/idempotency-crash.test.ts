import { describe, expect, it } from 'vitest';
import { benchIdempotencyCrash } from '../bench/idempotency-crash';

/**
 * The bench's idempotency crash test in a short form: `pnpm start`'s process killed with SIGKILL
 * while payments are in flight, restarted on its data, every payment retried past the lease.
 */
describe('the service killed during payments', () => {
  it('leaves no duplicate payment (no second charge) and none missing once every payment is retried', async () => {
    const result = await benchIdempotencyCrash({ payments: 40, concurrency: 8, killAfter: 12 });
    expect(result.answeredBeforeKill).toBeGreaterThanOrEqual(12);
    // The kill really left runs half done, so the retries had claims to resume.
    expect(result.claimsLeftInFlight).toBeGreaterThanOrEqual(1);
    expect(result.retriedOk).toBe(40);
    expect(result).toMatchObject({ duplicates: 0, missing: 0, changedAnswers: 0 });
  }, 180_000);
});
