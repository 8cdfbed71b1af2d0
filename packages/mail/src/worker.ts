import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { BUSINESS_METRICS, handleSqsBatch, logger, now, oneByOne, recordMetric, sdkClient } from '@svc/core';
import { queryPages } from '@svc/table';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { composeMail } from './compose';
import {
  claimMail,
  enqueueMail,
  findMail,
  MAIL_REQUEUE_SECONDS,
  MAIL_SHARDS,
  mailDuePartition,
  mailMessageSchema,
  markMailSent,
  postponeMail,
  releaseMail,
} from './outbox';
import type { MailData, MailTemplate } from './templates';

/**
 * The mail queue's worker: each message names one mail in the outbox; the worker claims it, sends
 * it through SES (API v2, SendEmail with Raw content) and marks it sent with a conditional write.
 *
 * Sent once. SendEmail takes no idempotency key or token (its request has none: SESv2 API
 * reference, SendEmail, https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html,
 * whose request fields are FromEmailAddress, Destination, Content, ConfigurationSetName, EmailTags,
 * … and no client token), so a second call sends a second e-mail. What keeps it to one:
 * - a duplicate message (SQS delivers at least once) finds the mail claimed or sent, and sends
 *   nothing (the claim is a conditional write, so two workers never both hold it);
 * - a message after the mail is marked sent finds it sent.
 * The one window left: SES has accepted the message and the worker dies (timeout, crash, lost
 * network) before its mark-sent write lands, or that write fails. Then the claim runs out
 * (MAIL_CLAIM_SECONDS), the message comes back and the mail is sent again. The window is one
 * DynamoDB UpdateItem after SES's answer (milliseconds; the SDK retries it up to 4 times); SES's
 * own call is inside it only when SES accepts a message and its answer never reaches us (our
 * SDK then retries or fails, and the mail goes again). It is written down in docs/operations.md.
 */
export const MAIL_WORKER_TIMEOUT_SECONDS = 30;
/** Longer than the worker's timeout: a claim outlives any invocation that holds it. */
export const MAIL_CLAIM_SECONDS = 2 * MAIL_WORKER_TIMEOUT_SECONDS;
/** Receives of a mail message before the queue moves it to its dead-letter queue. */
export const MAIL_MAX_RECEIVES = 5;

let ses: SESv2Client | undefined;

/** Locally the SDK finds the SES stand-in through AWS_ENDPOINT_URL_SESV2 (read when the client is made). */
export function resetMailSender(): void {
  ses = undefined;
}

function sender(): SESv2Client {
  // One SendEmail call per claim: a failed send is tried again from the queue (with its back-off
  // and dead-letter queue), never inside the invocation, so every attempt is counted on the item.
  ses ??= sdkClient(new SESv2Client({ maxAttempts: 1 }));
  // Signed at the service clock's time: in AWS that is the host's (offset 0); locally, where tests
  // move the clock by years, the SES stand-in checks signatures against the same clock. Set before
  // every send, so a moved clock never costs a refused send and a skew correction.
  ses.config.systemClockOffset = now() * 1000 - Date.now();
  return ses;
}

export function mailFrom(): string {
  const from = process.env.SVC_MAIL_FROM;
  if (!from) throw new Error('SVC_MAIL_FROM is not set');
  return from;
}

export type MailOutcome = 'sent' | 'already_sent';

/** One mail: claimed, sent, marked. Throws (the message comes back) when it cannot be sent now. */
export async function sendQueuedMail(id: string): Promise<MailOutcome> {
  const mail = await findMail(id);
  // Never written (a writer's transaction that failed still sent its message): nothing to send.
  if (!mail) throw new Error(`No mail ${id} in the outbox`);
  if (mail.state === 'sent') return 'already_sent';
  await claimMail(id, MAIL_CLAIM_SECONDS);
  const raw = await composeMail({
    id: mail.id,
    from: mailFrom(),
    to: mail.to,
    locale: mail.locale,
    template: mail.template,
    data: mail.data as MailData<MailTemplate>,
    attachments: mail.attachments ?? [],
    date: mail.queued_at,
  });
  let messageId: string;
  try {
    const out = await sender().send(
      new SendEmailCommand({
        FromEmailAddress: mailFrom(),
        Destination: { ToAddresses: [mail.to] },
        Content: { Raw: { Data: raw } },
      }),
    );
    messageId = out.MessageId ?? '';
  } catch (error) {
    recordMetric(BUSINESS_METRICS.mailSendFailures, 1, { reason: (error as Error).name ?? 'Error' });
    await releaseMail(id).catch((release: unknown) => logger.warn('mail claim not released', { id, error: release }));
    throw error;
  }
  if (!(await markMailSent(id, messageId))) {
    logger.error('mail sent by SES but already marked sent by another worker: sent twice', { id, messageId });
  }
  recordMetric(BUSINESS_METRICS.mailsSent, 1, { template: mail.template });
  return 'sent';
}

export async function processMailBatch(event: SQSEvent): Promise<{ response: SQSBatchResponse; sent: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'a mail to send',
    (body) => mailMessageSchema.parse(body).mail_id,
    (ids) => oneByOne(ids, sendQueuedMail),
  );
  return { response, sent: results.filter((outcome) => outcome === 'sent').length };
}

/** Unsent mails a sweep reads per shard at most (a larger backlog is swept over several runs). */
const SWEEP_PER_SHARD = 1000;

export interface MailSweep {
  /** Unsent mails past their due time, each sent another message. */
  requeued: number;
  /** The longest any of them has waited since it was queued, in seconds (0 when none). */
  oldest_age: number;
}

/**
 * Every unsent mail whose due time has come gets another message on the mail queue, and its next
 * due time is MAIL_REQUEUE_SECONDS on: a mail whose message was lost, went to the dead-letter
 * queue, or was never sent (the writer died after its write) is sent after all. Reports
 * MailUnsent (how many) and MailUnsentAge (the oldest's wait since queued) every sweep, 0 when
 * none: the alarm on mails unsent too long reads them.
 */
export async function sweepUnsentMail(at = now()): Promise<MailSweep> {
  let requeued = 0;
  let oldest = 0;
  for (let shard = 0; shard < MAIL_SHARDS; shard++) {
    const pages = queryPages({
      index: 'due',
      partition: mailDuePartition(shard),
      sortBefore: `${String(at + 1).padStart(12, '0')}#`,
      limit: SWEEP_PER_SHARD,
    });
    for await (const page of pages) {
      for (const entry of page) {
        const id = String(entry.pk).slice('MAIL#'.length);
        const mail = await findMail(id);
        if (!mail || mail.state === 'sent') continue;
        oldest = Math.max(oldest, at - mail.queued_at);
        await postponeMail(id, at + MAIL_REQUEUE_SECONDS);
        await enqueueMail(id);
        requeued++;
      }
    }
  }
  recordMetric(BUSINESS_METRICS.mailUnsent, requeued);
  recordMetric(BUSINESS_METRICS.mailUnsentAge, oldest, {}, 'Seconds');
  if (requeued > 0) logger.warn('unsent mails sent to the queue again', { requeued, oldest_age: oldest });
  return { requeued, oldest_age: oldest };
}
