import { advanceClock, ConflictError, NotFoundError, ValidationError } from '@svc/core';
import { findSubscription } from '@svc/subscriptions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  billingRun,
  DEMO,
  localDay,
  subscription as newSubscription,
  ok,
  setClock,
  setup,
} from '../../subscriptions/src/test-support';
import {
  cancelDonorSubscription,
  changeDonorTerms,
  donorPayments,
  donorSubscription,
  donorSubscriptions,
  pauseDonorSubscription,
  resumeDonorSubscription,
  skipDonorCharge,
} from './domain/manage';

/**
 * What a donor does in the portal (issue 47 point 2): each change through the subscriptions
 * domain's rules, as the supporter, within the organisation's settings, announced with
 * `changed_by`. The portal is turned on for the demo organisation (its account holds the sources).
 */
const SETTINGS = {
  enabled: true,
  features: {
    amount: true,
    interval: true,
    next_date: true,
    skip: true,
    pause: true,
    payment_method: true,
    cancel: true,
  },
  min_amount: 500,
  max_amount: 50_000,
  intervals: ['monthly', 'quarterly', 'yearly'],
  cancel_reasons: ['too_expensive', 'other'],
  retention_offer: 'pause',
  brand: { name: 'Demo Stiftung', color: '#0a7d3b' },
  return_url: null,
};

const settings = (changes: Partial<typeof SETTINGS> = {}) =>
  ok('PUT', `/organisations/${DEMO.org}/portal-settings`, { ...SETTINGS, ...changes });

beforeAll(async () => {
  await setup();
  await settings();
});

async function donorWithSubscription(fields: Record<string, unknown> = {}) {
  const supporter = await ok(
    'POST',
    '/supporters',
    { organisation_uuid: DEMO.org, first_name: 'Ada', email: 'ada@example.org' },
    201,
  );
  const created = await newSubscription({ supporter_uuid: supporter.uuid, ...fields });
  // The first charge is today's: billed now, so the next one is a period away.
  await billingRun();
  return {
    donor: { organisation_uuid: DEMO.org, supporter_uuid: supporter.uuid as string },
    uuid: created.uuid as string,
  };
}

/** The names and `changed_by` of the events of the subscription's latest write. */
async function lastEvents(uuid: string) {
  const record = await findSubscription(uuid);
  return (record?.events ?? []).map((event) => ({ name: event.name, changed_by: event.changed_by }));
}

const BY_DONOR = { actor: 'supporter', channel: 'portal' };

describe('the donor’s subscriptions (portal JSON API domain)', () => {
  it('lists only the supporter’s own subscriptions, as GET shows them; anyone else’s is not found', async () => {
    setClock('2031-03-10T09:00:00');
    const mine = await donorWithSubscription();
    const other = await donorWithSubscription();
    const listed = await donorSubscriptions(mine.donor);
    expect(listed.map((s) => s.uuid)).toEqual([mine.uuid]);
    const viaApi = await ok('GET', `/subscriptions/${mine.uuid}`);
    expect(listed[0]).toEqual(viaApi);
    await expect(donorSubscription(mine.donor, other.uuid)).rejects.toBeInstanceOf(NotFoundError);
    await expect(skipDonorCharge(mine.donor, other.uuid, { due_date: '2031-04-10' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    // The same supporter uuid under another organisation sees nothing.
    const elsewhere = { organisation_uuid: DEMO.otherOrg, supporter_uuid: mine.donor.supporter_uuid };
    await expect(donorSubscription(elsewhere, mine.uuid)).rejects.toThrow();
  });

  it('changes the amount within min/max and the interval within the list, from the next charge, as an update by the supporter', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    const changed = await changeDonorTerms(donor, uuid, { amount: 4000, recurring_interval: 'quarterly' });
    expect(changed).toMatchObject({ amount: 4000, recurring_interval: 'quarterly' });
    expect(await lastEvents(uuid)).toEqual([{ name: 'svc.subscriptions.subscription.updated', changed_by: BY_DONOR }]);
    await expect(changeDonorTerms(donor, uuid, { amount: 499 })).rejects.toBeInstanceOf(ValidationError);
    await expect(changeDonorTerms(donor, uuid, { amount: 50_001 })).rejects.toBeInstanceOf(ValidationError);
    await expect(changeDonorTerms(donor, uuid, { recurring_interval: 'weekly' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect((await findSubscription(uuid))?.amount).toBe(4000);
    // The organisation's settings are read at each change: a feature turned off is refused.
    await settings({ features: { ...SETTINGS.features, amount: false } });
    try {
      await expect(changeDonorTerms(donor, uuid, { amount: 3000 })).rejects.toBeInstanceOf(ConflictError);
    } finally {
      await settings();
    }
  });

  it('a change through the API is an update by the organisation', async () => {
    setClock('2031-03-10T09:00:00');
    const { uuid } = await donorWithSubscription();
    await ok('PATCH', `/subscriptions/${uuid}`, { amount: 3100 });
    expect(await lastEvents(uuid)).toEqual([
      { name: 'svc.subscriptions.subscription.updated', changed_by: { actor: 'organisation', channel: 'api' } },
    ]);
    // A PATCH that changes nothing announces nothing.
    await ok('PATCH', `/subscriptions/${uuid}`, { amount: 3100 });
    expect(await lastEvents(uuid)).toEqual([]);
  });

  it('moves the next charge (and the grid) within one period, never past the charge after it', async () => {
    const start = setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    const before = await ok('GET', `/subscriptions/${uuid}`);
    expect(localDay(before.next_due_date, 'UTC')).toBe('2031-04-10');
    advanceClock(86_400); // 11 March: the next charge is 10 April
    const moved = await changeDonorTerms(donor, uuid, { next_due_date: '2031-04-20' });
    expect(localDay(moved.next_due_date ?? 0, 'UTC')).toBe('2031-04-20');
    // Unix seconds of local midnight, as GET shows it, are taken too.
    const back = await changeDonorTerms(donor, uuid, { next_due_date: moved.next_due_date ?? 0 });
    expect(back.next_due_date).toBe(moved.next_due_date);
    for (const day of ['2031-03-11', '2031-03-01', '2031-05-20', 'soon']) {
      await expect(changeDonorTerms(donor, uuid, { next_due_date: day }), day).rejects.toBeInstanceOf(ValidationError);
    }
    expect(start).toBeGreaterThan(0);
  });

  it('skips exactly the next charge: the billing run charges nothing that day, and the one after as usual', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    advanceClock(86_400);
    await expect(skipDonorCharge(donor, uuid, { due_date: '2031-05-10' })).rejects.toBeInstanceOf(ValidationError);
    const skipped = await skipDonorCharge(donor, uuid, { due_date: '2031-04-10' });
    expect(localDay(skipped.next_due_date ?? 0, 'UTC')).toBe('2031-05-10');
    expect(await lastEvents(uuid)).toEqual([{ name: 'svc.subscriptions.subscription.updated', changed_by: BY_DONOR }]);
    const invoices = async () => (await ok('GET', `/subscriptions/${uuid}/invoices`)).length as number;
    const before = await invoices();
    setClock('2031-04-10T12:00:00');
    await billingRun();
    expect(await invoices()).toBe(before);
    setClock('2031-05-10T12:00:00');
    await billingRun();
    expect(await invoices()).toBe(before + 1);
  });

  it('pauses until a date or indefinitely, and resumes on the grid with no catch-up charge', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    advanceClock(86_400);
    const paused = await pauseDonorSubscription(donor, uuid, {});
    expect(paused.subscription_status).toBe('suspended');
    expect(paused.next_due_date).toBeUndefined();
    expect(await lastEvents(uuid)).toEqual([
      { name: 'svc.subscriptions.subscription.suspended', changed_by: BY_DONOR },
    ]);
    const invoices = async () => (await ok('GET', `/subscriptions/${uuid}/invoices`)).length as number;
    const before = await invoices();
    setClock('2031-05-20T12:00:00'); // two due days (10 April, 10 May) pass while paused
    await billingRun();
    const resumed = await resumeDonorSubscription(donor, uuid);
    expect(resumed.subscription_status).toBe('active');
    expect(localDay(resumed.next_due_date ?? 0, 'UTC')).toBe('2031-06-10');
    expect(await lastEvents(uuid)).toEqual([
      { name: 'svc.subscriptions.subscription.activated', changed_by: BY_DONOR },
    ]);
    await billingRun();
    expect(await invoices()).toBe(before);
    await expect(resumeDonorSubscription(donor, uuid)).rejects.toBeInstanceOf(ConflictError);

    const until = await pauseDonorSubscription(donor, uuid, { resume_on: '2031-08-01' });
    expect(until.subscription_status).toBe('suspended');
    expect(localDay(until.next_due_date ?? 0, 'UTC')).toBe('2031-08-10');
  });

  it('cancels with a reason from the organisation’s list (and a comment), shown on the subscription', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    await expect(cancelDonorSubscription(donor, uuid, { reason: 'boredom' })).rejects.toBeInstanceOf(ValidationError);
    const cancelled = await cancelDonorSubscription(donor, uuid, {
      reason: 'too_expensive',
      comment: '  Rent went up ',
    });
    expect(cancelled).toMatchObject({
      subscription_status: 'cancelled',
      cancellation: { reason: 'too_expensive', comment: 'Rent went up' },
    });
    expect(await lastEvents(uuid)).toEqual([
      { name: 'svc.subscriptions.subscription.cancelled', changed_by: BY_DONOR },
    ]);
    await expect(cancelDonorSubscription(donor, uuid, { reason: 'other' })).rejects.toBeInstanceOf(ConflictError);
    expect((await api('GET', `/subscriptions/${uuid}`)).json.cancellation.reason).toBe('too_expensive');
  });

  it('lists the gifts of a year, the donor’s own only', async () => {
    setClock('2031-12-05T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    setClock('2032-01-05T12:00:00');
    await billingRun();
    setClock('2032-02-05T12:00:00');
    await billingRun();
    const invoices = await ok('GET', `/subscriptions/${uuid}/invoices`);
    expect(invoices.length).toBe(3);
    const year = await donorPayments(donor, 2032);
    expect(year.payments.length).toBe(2);
    const [newer, older] = year.payments.map((p) => Number(p.created));
    expect(newer).toBeGreaterThan(older ?? Infinity * -1);
    expect(year.payments[0]).toMatchObject({ supporter_uuid: donor.supporter_uuid, amount: { value: '2500' } });
    expect((await donorPayments(donor, 2031)).payments.length).toBe(1);
    expect((await donorPayments(donor, 2030)).payments).toEqual([]);
    const other = await donorWithSubscription();
    const others = (await donorPayments(other.donor, 2032)).payments;
    expect(others.map((p) => p.supporter_uuid)).toEqual([other.donor.supporter_uuid]);
  });

  it('refuses everything while the organisation’s portal is off', async () => {
    setClock('2031-03-10T09:00:00');
    const { donor, uuid } = await donorWithSubscription();
    await settings({ enabled: false });
    try {
      await expect(donorSubscriptions(donor)).rejects.toBeInstanceOf(ConflictError);
      await expect(pauseDonorSubscription(donor, uuid, {})).rejects.toBeInstanceOf(ConflictError);
    } finally {
      await settings();
    }
  });
});
