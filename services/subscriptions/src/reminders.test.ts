import { asFunction, newUuid, now } from '@svc/core';
import { db } from '@svc/table';
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { findMail } from '../../../packages/mail/src/index';
import { call } from '../../../test/support/api';
import { linkTokenHash, PORTAL_LINK, reminderMailId } from '../../portal/src/index';
import { runBilling } from './domain/billing-run';
import { remindIfDue } from './domain/reminders';
import { processBillingBatch } from './handlers/billing-worker';
import { findSubscription } from './repository/subscription-repository';
import { at, billingRun, DEMO, ok, savedSource, setClock, setup, subscription } from './test-support';

/**
 * Charge reminders (contract section 12, issue 47 point 5): subscriptions charged every 6 months or
 * less often get a mail 7 days before each charge, with the amount, the date and a portal link,
 * sent by the billing run; the run still reads only what is due.
 */
const ZONE = 'Europe/Zurich';

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
  min_amount: null,
  max_amount: null,
  intervals: ['monthly', 'semestral', 'yearly'],
  cancel_reasons: ['other'],
  retention_offer: null,
  brand: { name: 'Stiftung Sonnenschein', color: '#0a7d3b' },
  return_url: null,
};

async function portal(enabled: boolean): Promise<void> {
  await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, { ...SETTINGS, enabled });
}

let source: string;

beforeAll(async () => {
  await setup();
  await portal(true);
  source = await savedSource();
  // Starts the local queues and the SES stand-in the reminders' mails go through.
  await ok('POST', '/_local/settle');
});

interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
}

/** A supporter of the demo organisation with its own address (mails are told apart by it). */
async function donor(locale = 'de', email: string | null = `donor-${newUuid()}@example.org`) {
  const created = await ok(
    'POST',
    '/supporters',
    { organisation_uuid: DEMO.org, first_name: 'Ada', locale, ...(email ? { email } : {}) },
    201,
  );
  return { uuid: created.uuid as string, email: email ?? '' };
}

/** A subscription first charged on `first` (Europe/Zurich), for the supporter. */
async function subscribed(supporter: string, recurring_interval: string, first: string, amount = 2500) {
  return subscription({
    supporter_uuid: supporter,
    payment_source_uuid: source,
    recurring_interval,
    timezone: ZONE,
    planned_effective_from: first,
    amount,
  });
}

async function mailsTo(to: string): Promise<Mail[]> {
  const listed = await call('GET', `/_local/mail?to=${encodeURIComponent(to)}`);
  expect(listed.status).toBe(200);
  return listed.json as Mail[];
}

/** One billing run at a wall-clock time in Zurich, and the mail it queued sent. */
async function runAt(local: string): Promise<void> {
  setClock(local, ZONE);
  await billingRun();
  await ok('POST', '/_local/settle');
}

async function invoices(uuid: string): Promise<number> {
  return (await ok('GET', `/subscriptions/${uuid}/invoices`)).length;
}

describe('charge reminders', () => {
  it('6-monthly, yearly and 6-monthly cron subscriptions hear of each charge once, 7 days ahead; monthly and quarterly ones never', async () => {
    setClock('2028-01-10T09:00', ZONE);
    const people = {
      semestral: await donor(),
      yearly: await donor(),
      cron: await donor(),
      monthly: await donor(),
      quarterly: await donor(),
    };
    const subs = {
      semestral: await subscribed(people.semestral.uuid, 'semestral', '2028-03-01'),
      yearly: await subscribed(people.yearly.uuid, 'yearly', '2028-03-15'),
      cron: await subscribed(people.cron.uuid, '10 4,10 *', '2028-04-10'),
      monthly: await subscribed(people.monthly.uuid, 'monthly', '2028-03-01'),
      quarterly: await subscribed(people.quarterly.uuid, 'quarterly', '2028-03-01'),
    };
    type Who = keyof typeof people;
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(
          (Object.keys(people) as Who[]).map(async (who) => [who, (await mailsTo(people[who].email)).length]),
        ),
      );
    const none = { semestral: 0, yearly: 0, cron: 0, monthly: 0, quarterly: 0 };
    // [Zurich wall-clock time of a run, the mails each supporter has after it]
    const timeline: Array<[string, typeof none]> = [
      ['2028-02-22T23:59', none],
      ['2028-02-23T00:01', { ...none, semestral: 1 }],
      ['2028-02-25T12:00', { ...none, semestral: 1 }],
      ['2028-03-01T00:01', { ...none, semestral: 1 }],
      ['2028-03-07T23:59', { ...none, semestral: 1 }],
      ['2028-03-08T00:01', { ...none, semestral: 1, yearly: 1 }],
      ['2028-03-15T00:01', { ...none, semestral: 1, yearly: 1 }],
      ['2028-04-03T00:01', { ...none, semestral: 1, yearly: 1, cron: 1 }],
      ['2028-04-10T00:01', { ...none, semestral: 1, yearly: 1, cron: 1 }],
      ['2028-08-24T23:59', { ...none, semestral: 1, yearly: 1, cron: 1 }],
      ['2028-08-25T00:01', { ...none, semestral: 2, yearly: 1, cron: 1 }],
      ['2028-09-01T00:01', { ...none, semestral: 2, yearly: 1, cron: 1 }],
      ['2028-10-03T00:01', { ...none, semestral: 2, yearly: 1, cron: 2 }],
      ['2028-10-10T00:01', { ...none, semestral: 2, yearly: 1, cron: 2 }],
      ['2029-02-22T00:01', { ...none, semestral: 3, yearly: 1, cron: 2 }],
      ['2029-03-01T00:01', { ...none, semestral: 3, yearly: 1, cron: 2 }],
      ['2029-03-08T00:01', { ...none, semestral: 3, yearly: 2, cron: 2 }],
      ['2029-03-08T10:00', { ...none, semestral: 3, yearly: 2, cron: 2 }],
      ['2029-03-15T00:01', { ...none, semestral: 3, yearly: 2, cron: 2 }],
    ];
    for (const [time, expected] of timeline) {
      await runAt(time);
      expect(await counts(), `after the run at ${time}`).toEqual(expected);
    }
    // Every charge was made as before: three 6-monthly, two yearly, two cron ones.
    expect(await invoices(subs.semestral.uuid)).toBe(3);
    expect(await invoices(subs.yearly.uuid)).toBe(2);
    expect(await invoices(subs.cron.uuid)).toBe(2);
    expect(await invoices(subs.monthly.uuid)).toBeGreaterThan(2);
    // Each reminder names its own charge's day (de: "1. März 2028", "1. September 2028", …).
    expect((await mailsTo(people.semestral.email)).map((mail) => /Am (.+?) belasten/.exec(mail.text)?.[1])).toEqual([
      '1. März 2029',
      '1. September 2028',
      '1. März 2028',
    ]);
  }, 180_000);

  it('says the amount in its currency, the date, and carries a manage link for the subscription, redeemable until the charge', async () => {
    setClock('2028-05-02T15:00', ZONE);
    const person = await donor('en');
    const created = await subscribed(person.uuid, 'yearly', '2028-06-20', 12_345);
    await runAt('2028-06-13T00:05');
    const [mail, ...more] = await mailsTo(person.email);
    expect(more).toEqual([]);
    expect(mail?.subject).toBe('Your next donation: Stiftung Sonnenschein');
    expect(mail?.text.replace(/\s/g, ' ')).toContain(
      'On 20 June 2028 we will charge CHF 123.45 for your donation to Stiftung Sonnenschein.',
    );
    const url = new URL(mail?.links[0] ?? '');
    expect(`${url.origin}${url.pathname}`).toMatch(/^https?:\/\/[^/]+\/portal$/);
    expect(mail?.text).toContain(url.href);
    // The organisation's brand colour on the button (white text on it is readable).
    expect(mail?.html).toContain('background:#0a7d3b');
    const token = url.searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThanOrEqual(43);
    // Redeemable: its keyed hash names a link, for this supporter and subscription, until the charge.
    const link = await PORTAL_LINK.find(await linkTokenHash(token));
    expect(link).toMatchObject({
      organisation_uuid: DEMO.org,
      supporter_uuid: person.uuid,
      email: person.email,
      flow: 'manage',
      subscription_uuid: created.uuid,
      locale: 'en',
      created: now(),
      expires_at: at('2028-06-20T00:00', ZONE),
    });
    expect(link?.used_at).toBeUndefined();
    expect((await findMail(reminderMailId(created.uuid, '2028-06-20')))?.state).toBe('sent');
    expect((await findSubscription(created.uuid))?.reminded_for).toBe('2028-06-20');
  });

  it('a message delivered again, or to several workers at once, queues one mail', async () => {
    setClock('2028-05-02T15:00', ZONE);
    const person = await donor('fr');
    const created = await subscribed(person.uuid, 'semestral', '2028-07-01');
    setClock('2028-06-24T00:30', ZONE);
    const body = JSON.stringify({ kind: 'subscription', subscription_uuid: created.uuid, due: now() });
    const record = (id: string) => ({ messageId: id, body }) as SQSEvent['Records'][number];
    // Three in one batch (processed at once) and two workers' batches at the same time.
    const batches = await asFunction('billing-worker', () =>
      Promise.all([
        processBillingBatch({ Records: [record('a'), record('b'), record('c')] }),
        processBillingBatch({ Records: [record('d')] }),
      ]),
    );
    for (const batch of batches) expect(batch.response.batchItemFailures).toEqual([]);
    // And the step itself raced five times more, then a redelivery later.
    const raced = await asFunction('billing-worker', () =>
      Promise.all(Array.from({ length: 5 }, () => remindIfDue(created.uuid))),
    );
    expect(raced.filter(Boolean)).toHaveLength(0);
    await asFunction('billing-worker', () => processBillingBatch({ Records: [record('e')] }));
    await ok('POST', '/_local/settle');
    const mails = await mailsTo(person.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe('Votre prochain don: Stiftung Sonnenschein');
    expect(mails[0]?.text).toMatch(/25\.00.CHF/);
    // No charge yet: the reminder came alone.
    expect(await invoices(created.uuid)).toBe(0);
  });

  it('races on a fresh subscription: of five workers at once exactly one queues the mail', async () => {
    setClock('2028-05-02T15:00', ZONE);
    const person = await donor('it');
    const created = await subscribed(person.uuid, 'yearly', '2028-08-01');
    setClock('2028-07-25T08:00', ZONE);
    const raced = await asFunction('billing-worker', () =>
      Promise.all(Array.from({ length: 5 }, () => remindIfDue(created.uuid))),
    );
    expect(raced.filter(Boolean)).toEqual([true]);
    await ok('POST', '/_local/settle');
    expect(await mailsTo(person.email)).toHaveLength(1);
  });

  it('with the portal off the reminder goes without a link; a supporter without an e-mail gets none, and the run moves on', async () => {
    setClock('2028-05-02T15:00', ZONE);
    const withMail = await donor('de');
    const withoutMail = await donor('de', null);
    const linked = await subscribed(withMail.uuid, 'yearly', '2028-09-10');
    const unmailed = await subscribed(withoutMail.uuid, 'yearly', '2028-09-10');
    await portal(false);
    try {
      await runAt('2028-09-03T06:00');
    } finally {
      await portal(true);
    }
    const [mail, ...more] = await mailsTo(withMail.email);
    expect(more).toEqual([]);
    expect(mail?.links).toEqual([]);
    expect(mail?.text).toContain('Für Änderungen wenden Sie sich bitte an Stiftung Sonnenschein.');
    // The supporter without an address: no mail, the day marked, and nothing due until the charge.
    expect((await findSubscription(unmailed.uuid))?.reminded_for).toBe('2028-09-10');
    expect((await findSubscription(linked.uuid))?.reminded_for).toBe('2028-09-10');
    const due: string[] = [];
    await runBilling(async (entries) => {
      due.push(...entries.map((entry) => entry.subscription_uuid));
    });
    expect(due).not.toContain(unmailed.uuid);
    expect(due).not.toContain(linked.uuid);
  });

  it('a subscription set up less than 7 days before its charge gets no late reminder, the next charge its reminder as usual', async () => {
    setClock('2028-05-02T15:00', ZONE);
    const person = await donor('en');
    const created = await subscribed(person.uuid, 'semestral', '2028-05-05');
    await runAt('2028-05-02T15:01');
    await runAt('2028-05-05T00:01');
    expect(await invoices(created.uuid)).toBe(1);
    expect(await mailsTo(person.email)).toHaveLength(0);
    await runAt('2028-10-29T00:01');
    const mails = await mailsTo(person.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain('5 November 2028');
  });
});

/** Items the run's due-index queries returned, counted at the table client. */
async function dueItemsRead(work: () => Promise<unknown>): Promise<number> {
  const client = db();
  const original = client.send.bind(client);
  let read = 0;
  client.send = (async (
    command: { constructor: { name: string }; input: { IndexName?: string } },
    ...rest: unknown[]
  ) => {
    // biome-ignore lint/suspicious/noExplicitAny: the document client's send is overloaded
    const result = await (original as any)(command, ...rest);
    if (command.constructor.name === 'QueryCommand' && command.input.IndexName === 'due') {
      read += Number((result as { ScannedCount?: number }).ScannedCount ?? 0);
    }
    return result;
  }) as typeof client.send;
  try {
    await work();
  } finally {
    client.send = original as typeof client.send;
  }
  return read;
}

describe('the billing run with reminders', () => {
  it('reads only the due entries: none of many subscriptions before their reminders, exactly those whose reminder is due then', async () => {
    setClock('2030-01-02T09:00', ZONE);
    // Whatever earlier tests left due is done first.
    await billingRun();
    const person = await donor('de');
    const N = 24;
    const intervals = ['semestral', 'yearly', 'monthly', '1 3,9 *'];
    const created: string[] = [];
    for (let i = 0; i < N; i++) {
      const interval = intervals[i % intervals.length] as string;
      created.push((await subscribed(person.uuid, interval, '2030-03-01')).uuid);
    }
    const entries: string[] = [];
    const collect = async (page: Array<{ subscription_uuid: string }>) => {
      entries.push(...page.map((entry) => entry.subscription_uuid));
    };
    expect(await dueItemsRead(() => runBilling(collect))).toBe(0);
    expect(entries).toEqual([]);

    // A week before the first charges: the reminders of the 6-monthly or rarer ones, nothing else.
    setClock('2030-02-22T00:10', ZONE);
    const read = await dueItemsRead(() => runBilling(collect));
    const reminded = created.filter((_, i) => intervals[i % intervals.length] !== 'monthly');
    expect(new Set(entries.filter((uuid) => created.includes(uuid)))).toEqual(new Set(reminded));
    // The run read its due entries and nothing else (earlier tests' subscriptions due then among them).
    expect(read).toBe(entries.length);

    // Once sent, nothing is due again before the charges.
    await billingRun();
    entries.length = 0;
    expect(await dueItemsRead(() => runBilling(collect))).toBe(0);
    expect(entries).toEqual([]);
  }, 120_000);
});
