import { advanceClock, asFunction, freezeClock, now } from '@svc/core';
import {
  findMail,
  MAIL_CLAIM_SECONDS,
  MAIL_REQUEUE_SECONDS,
  mailOutboxWrite,
  queueMail,
  sendQueuedMail,
} from '@svc/mail';
import { transactWrite } from '@svc/table';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from './support/api';

/**
 * Mail through the local runtime as through AWS: queueMail writes the outbox item and sends the
 * message; settle runs the mail worker on the SQS stand-in's queue, which sends through the SES
 * stand-in (SESv2 SendEmail, signed); GET /_local/mail lists what SES accepted (contract 14).
 */
const LINK = 'https://donate.example.org/portal?token=t0k3n';
let n = 0;
const address = () => `donor-${Date.now()}-${n++}@example.com`;

const portalLink = (id: string, to: string) =>
  ({
    id,
    to,
    locale: 'de',
    template: 'portal_link',
    data: { organisation_name: 'Demo Foundation', url: LINK, expires_at: now() + 86_400 },
  }) as const;

const settle = async () => expect((await call('POST', '/_local/settle')).status).toBe(200);
const mailTo = async (to: string) => {
  const listed = await call('GET', `/_local/mail?to=${encodeURIComponent(to)}`);
  expect(listed.status).toBe(200);
  return listed.json as Array<{
    to: string;
    subject: string;
    text: string;
    html: string;
    links: string[];
    attachments: unknown[];
  }>;
};
const fault = (mode: 'throttle' | 'error' | null, count?: number) =>
  call('POST', '/_local/mail/fault', { body: { mode, ...(count ? { count } : {}) } });

beforeAll(async () => {
  // Starts the stand-ins (queues, SES) the first settle needs.
  await settle();
});

beforeEach(async () => {
  freezeClock(now());
  await fault(null);
});

describe('mail', () => {
  it('a queued mail is sent once and listed by /_local/mail, newest first, with its links', async () => {
    const to = address();
    const queued = await queueMail(portalLink(`portal_link:${to}`, to));
    expect(queued).toEqual({ id: `portal_link:${to}`, state: 'queued', created: true });
    await settle();
    await settle();
    const listed = await mailTo(to);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      to,
      subject: 'Ihre Spenden verwalten: Demo Foundation',
      links: [LINK],
      attachments: [],
    });
    expect(listed[0]?.text).toContain(LINK);
    expect(listed[0]?.html).toContain('Spenden verwalten');
    expect((await findMail(`portal_link:${to}`))?.state).toBe('sent');

    await queueMail({
      ...portalLink(`portal_code:${to}`, to),
      template: 'portal_code',
      data: { organisation_name: 'Demo Foundation', code: '123456', expires_at: now() + 600 },
    });
    await settle();
    expect((await mailTo(to)).map((m) => m.subject)).toEqual([
      'Ihr Bestätigungscode',
      'Ihre Spenden verwalten: Demo Foundation',
    ]);
  });

  it('the same id queued twice is sent once, before and after the first send', async () => {
    const to = address();
    const mail = portalLink(`portal_link:${to}`, to);
    await queueMail(mail);
    expect(await queueMail(mail)).toEqual({ id: mail.id, state: 'queued', created: false });
    await settle();
    expect(await queueMail(mail)).toEqual({ id: mail.id, state: 'sent', created: false });
    await settle();
    expect(await mailTo(to)).toHaveLength(1);
  });

  it('two workers given the same mail at once (a duplicate message) send it once: the claim is a conditional write', async () => {
    const to = address();
    const mail = portalLink(`portal_link:${to}`, to);
    await transactWrite([{ item: mailOutboxWrite(mail) }]);
    const outcomes = await asFunction('mail-worker', () =>
      Promise.allSettled([sendQueuedMail(mail.id), sendQueuedMail(mail.id), sendQueuedMail(mail.id)]),
    );
    expect(
      outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<string>).value),
    ).toEqual(['sent']);
    expect(
      outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.name),
    ).toEqual(['MailBusyError', 'MailBusyError']);
    // Later messages, and sweeps past its claim, find it sent.
    advanceClock(MAIL_CLAIM_SECONDS + MAIL_REQUEUE_SECONDS);
    expect(await asFunction('mail-worker', () => sendQueuedMail(mail.id))).toBe('already_sent');
    await settle();
    expect(await mailTo(to)).toHaveLength(1);
  });

  it('a send SES refuses for the moment is tried again and then sent once', async () => {
    const to = address();
    // SES throttles the first attempt: the message comes back only after its visibility timeout.
    expect((await fault('throttle', 1)).status).toBe(200);
    await queueMail(portalLink(`portal_link:${to}`, to));
    await settle();
    expect(await mailTo(to)).toHaveLength(0);
    expect((await findMail(`portal_link:${to}`))?.state).toBe('queued');
    // The sweeper sends it again once its due time has come (the failed message is still hidden).
    await fault('error', 1);
    advanceClock(MAIL_REQUEUE_SECONDS);
    await settle();
    expect(await mailTo(to)).toHaveLength(0);
    advanceClock(MAIL_REQUEUE_SECONDS);
    await settle();
    const listed = await mailTo(to);
    expect(listed).toHaveLength(1);
    expect((await findMail(`portal_link:${to}`))?.attempts).toBe(3);
    // Later sweeps and messages find it sent: nothing more goes out.
    advanceClock(MAIL_REQUEUE_SECONDS * 4);
    await settle();
    expect(await mailTo(to)).toHaveLength(1);
  });

  it('a mail written in the caller’s own transaction whose message never went out is sent by the sweeper', async () => {
    const to = address();
    await transactWrite([{ item: mailOutboxWrite(portalLink(`portal_link:${to}`, to)) }]);
    await settle();
    expect(await mailTo(to)).toHaveLength(0);
    advanceClock(MAIL_REQUEUE_SECONDS);
    await settle();
    expect(await mailTo(to)).toHaveLength(1);
  });

  it('refuses a mail the outbox cannot send before writing anything', async () => {
    const to = address();
    await expect(queueMail({ ...portalLink('bad id with spaces', to) })).rejects.toThrow(/mail id/);
    await expect(queueMail({ ...portalLink(`portal_link:${to}`, 'not-an-address') })).rejects.toThrow(/e-mail address/);
    await expect(
      queueMail({
        ...portalLink(`portal_link:${to}`, to),
        data: { organisation_name: 'x', url: 'http://evil.example/', expires_at: 1 },
      }),
    ).rejects.toThrow();
    expect(await findMail(`portal_link:${to}`)).toBeUndefined();
  });
});
