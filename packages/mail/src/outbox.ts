import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { now, sdkClient, ValidationError } from '@svc/core';
import { db, defineEntity, type ItemKey, key, type TransactItem, tableName, timeKey } from '@svc/table';
import * as z from 'zod';
import type { MailAttachment } from './compose';
import {
  MAIL_LOCALES,
  MAIL_TEMPLATES,
  type MailData,
  type MailLocale,
  type MailTemplate,
  parseMailData,
} from './templates';

/**
 * The mail outbox: one item per mail in the single table, written once by a deterministic id, and
 * the mail queue (SVC_MAIL_QUEUE_URL) that hands it to the worker.
 *
 * Its access patterns are in its description (MAIL below; docs/access-patterns.md).
 *
 * Never lost: the item is written before any message, and an unsent item stays in the due index
 * until the worker marks it sent; the sweeper sends another message for every one still there at
 * its due time (a message lost, dropped into the dead-letter queue, or never sent because the
 * writer died after its write). Never queued twice: the write is conditional on the id being new.
 */
export const MAIL_PREFIX = 'MAIL';
export const MAIL_SORT = 'MAIL';
export const MAIL_DUE_PREFIX = 'MAIL_DUE';
export const MAIL_SHARDS = 4;
/** The item's `entity`. */
export const MAIL_ENTITY = 'mail';
/** How long after queuing (and after each sweep) an unsent mail gets another message. */
export const MAIL_REQUEUE_SECONDS = 15 * 60;
/** A sent mail's item is kept this long, so the same id queued again within it is still sent once. */
export const MAIL_SENT_RETENTION_SECONDS = 90 * 24 * 3600;
/** Together, base64: the outbox item must stay well under DynamoDB's 400 KB. */
export const MAX_ATTACHMENT_BYTES = 256 * 1024;

/** A caller's id for the mail: the same id is the same mail (queued once, sent once). */
const MAIL_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,199}$/;
/** A single recipient address, as SES takes it (ASCII local part, a dotted domain). */
const ADDRESS =
  /^[^\s@<>(),;:"[\]\\]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export interface QueueMailInput<T extends MailTemplate = MailTemplate> {
  /** Deterministic, from what the mail is for (`portal_link:<link uuid>`, `reminder:<sub>:<date>`). */
  id: string;
  to: string;
  locale: MailLocale;
  template: T;
  data: MailData<T>;
  attachments?: readonly MailAttachment[];
}

export const mailRecordSchema = z.object({
  id: z.string(),
  to: z.string(),
  locale: z.enum(MAIL_LOCALES),
  template: z.enum(MAIL_TEMPLATES as [MailTemplate, ...MailTemplate[]]),
  data: z.record(z.string(), z.unknown()),
  attachments: z
    .array(z.object({ filename: z.string(), content_type: z.string(), content_base64: z.string() }))
    .optional(),
  state: z.enum(['queued', 'sent']),
  queued_at: z.number(),
  attempts: z.number().optional(),
  claim_until: z.number().optional(),
  /** While unsent: when the sweeper sends it another message (its `due` index keys). */
  due_at: z.number().optional(),
  sent_at: z.number().optional(),
  ses_message_id: z.string().optional(),
});
export type MailRecord = z.infer<typeof mailRecordSchema>;

export const mailKey = (id: string): ItemKey => ({ pk: key(MAIL_PREFIX, id), sk: MAIL_SORT });

function shardOfMail(id: string): number {
  let hash = 0;
  for (const char of id) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return hash % MAIL_SHARDS;
}

export const mailDuePartition = (shard: number) => key(MAIL_DUE_PREFIX, shard);
export const mailDueKeys = (id: string, dueAt: number) => ({
  duepk: mailDuePartition(shardOfMail(id)),
  duesk: `${timeKey(dueAt)}#${id}`,
});

/**
 * The outbox item (docs/access-patterns.md is made from this). Its writes are the conditional
 * ones below (new only; claim, release, sent and postpone each conditioned on its state), not
 * `create`/`replace`: a mail has no version, its state is its guard.
 */
export const MAIL = defineEntity<MailRecord, string>({
  name: MAIL_ENTITY,
  summary: 'An e-mail to send through SES, queued once by its id (@svc/mail outbox).',
  prefix: MAIL_PREFIX,
  idShown: '<mail id>',
  sort: MAIL_SORT,
  id: (record) => record.id,
  idParts: (id) => [id],
  byKey: 'a mail by its id (queue, worker, sweeper)',
  indexes: [
    {
      index: 'due',
      pattern: 'unsent mails due for another message (the sweeper)',
      shown: `duepk = ${MAIL_DUE_PREFIX}#<shard 0-${MAIL_SHARDS - 1}>, duesk = <unix 12 digits>#<mail id>`,
      keys: (record) => {
        if (record.state !== 'queued' || record.due_at === undefined) return undefined;
        const due = mailDueKeys(record.id, record.due_at);
        return { partition: due.duepk, sort: due.duesk };
      },
    },
  ],
  parse: (value) => mailRecordSchema.parse(value),
});

/** The input checked (400 naming the field), and the item to write for it. */
export function mailOutboxItem(input: QueueMailInput, at = now()): Record<string, unknown> {
  if (!MAIL_ID.test(input.id))
    throw ValidationError.field(
      'id',
      'error.validation.not_valid',
      'A mail id: letters, digits and _ . : @ -, at most 200',
    );
  if (!ADDRESS.test(input.to) || input.to.length > 254) {
    throw ValidationError.field('to', 'error.validation.not_valid', 'Not an e-mail address SES can send to');
  }
  if (!(MAIL_LOCALES as readonly string[]).includes(input.locale)) {
    throw ValidationError.field('locale', 'error.validation.not_valid', `One of ${MAIL_LOCALES.join(', ')}`);
  }
  if (!MAIL_TEMPLATES.includes(input.template)) {
    throw ValidationError.field('template', 'error.validation.not_valid', `One of ${MAIL_TEMPLATES.join(', ')}`);
  }
  const parsed = parseMailDataOrThrow(input.template, input.data);
  const attachments = input.attachments ?? [];
  const bytes = attachments.reduce((sum, a) => sum + a.content_base64.length, 0);
  if (bytes > MAX_ATTACHMENT_BYTES) {
    throw ValidationError.field(
      'attachments',
      'error.validation.too_big',
      `At most ${MAX_ATTACHMENT_BYTES} bytes of base64 together`,
    );
  }
  const record: MailRecord = {
    id: input.id,
    to: input.to,
    locale: input.locale,
    template: input.template,
    data: parsed as Record<string, unknown>,
    ...(attachments.length > 0 ? { attachments: [...attachments] } : {}),
    state: 'queued',
    queued_at: at,
    attempts: 0,
    due_at: at + MAIL_REQUEUE_SECONDS,
  };
  return MAIL.item(record);
}

function parseMailDataOrThrow(template: MailTemplate, data: unknown) {
  try {
    return parseMailData(template, data);
  } catch (error) {
    const issue = error instanceof z.ZodError ? error.issues[0] : undefined;
    throw ValidationError.field(
      `data${issue?.path.length ? `.${issue.path.join('.')}` : ''}`,
      'error.validation.not_valid',
      issue?.message ?? 'Not the data this template takes',
    );
  }
}

/**
 * The outbox write for a caller's own transaction (the mail is queued exactly when the caller's
 * change is written): a Put only if the id is new. After the transaction, `enqueueMail(id)`; a
 * writer that dies in between leaves it to the sweeper (at most MAIL_REQUEUE_SECONDS late).
 * A transaction refused for this condition means the mail was queued before.
 */
export function mailOutboxWrite(input: QueueMailInput, at = now()): TransactItem {
  return { Put: { Item: mailOutboxItem(input, at), ConditionExpression: 'attribute_not_exists(pk)' } };
}

let queueClient: SQSClient | undefined;

export function resetMailQueueClient(): void {
  queueClient = undefined;
}

/** One message naming the mail on the mail queue. */
export async function enqueueMail(id: string): Promise<void> {
  const url = process.env.SVC_MAIL_QUEUE_URL;
  if (!url) throw new Error('SVC_MAIL_QUEUE_URL is not set');
  queueClient ??= sdkClient(new SQSClient({}));
  await queueClient.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify({ mail_id: id }) }));
}

export const mailMessageSchema = z.object({ mail_id: z.string().regex(MAIL_ID) }).strict();

export interface QueuedMail {
  id: string;
  /** `queued`: waiting for (or at) the worker; `sent`: SES took it before (nothing was queued now). */
  state: 'queued' | 'sent';
  /** False when the id was queued before (this call changed nothing but, if unsent, sent a message). */
  created: boolean;
}

/**
 * Queues a mail and returns once it is durable: the outbox item written (only if its id is new),
 * then a message on the mail queue. The same id again writes nothing: an unsent mail gets one more
 * message (harmless: the worker sends a mail once), a sent one nothing. If the message cannot be
 * sent the call fails, yet the mail is not lost: the item is written and the sweeper sends it.
 */
export async function queueMail<T extends MailTemplate>(input: QueueMailInput<T>): Promise<QueuedMail> {
  const item = mailOutboxItem(input as QueueMailInput);
  let created = true;
  try {
    await db().send(
      new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    created = false;
  }
  if (!created) {
    const existing = await findMail(input.id);
    if (existing?.state === 'sent') return { id: input.id, state: 'sent', created };
  }
  await enqueueMail(input.id);
  return { id: input.id, state: 'queued', created };
}

export async function findMail(id: string): Promise<MailRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: mailKey(id), ConsistentRead: true }));
  return out.Item ? mailRecordSchema.parse(out.Item) : undefined;
}

/** Another worker holds the mail now (a duplicate message): this message comes back later. */
export class MailBusyError extends Error {
  override name = 'MailBusyError';
  readonly expected = true;
}

/**
 * Takes the mail for one send: only while it is unsent and no claim is held (or the one held has
 * run out: its worker died). Counts the attempt. The claim outlasts the worker's timeout, so a
 * live worker's claim is never taken from it.
 */
export async function claimMail(id: string, claimSeconds: number, at = now()): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: mailKey(id),
        UpdateExpression: 'SET #claim = :until, #attempts = if_not_exists(#attempts, :zero) + :one',
        ConditionExpression: '#state = :queued AND (attribute_not_exists(#claim) OR #claim < :now)',
        ExpressionAttributeNames: { '#claim': 'claim_until', '#attempts': 'attempts', '#state': 'state' },
        ExpressionAttributeValues: {
          ':until': at + claimSeconds,
          ':zero': 0,
          ':one': 1,
          ':queued': 'queued',
          ':now': at,
        },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
      throw new MailBusyError(`Mail ${id} is being sent by another worker, or was sent`);
    }
    throw error;
  }
}

/** Gives the claim back after a failed send, so the next message need not wait for it to run out. */
export async function releaseMail(id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: mailKey(id),
      UpdateExpression: 'REMOVE #claim',
      ConditionExpression: '#state = :queued',
      ExpressionAttributeNames: { '#claim': 'claim_until', '#state': 'state' },
      ExpressionAttributeValues: { ':queued': 'queued' },
    }),
  );
}

/**
 * Marks the mail sent, once: out of the due index, kept MAIL_SENT_RETENTION_SECONDS (TTL). False
 * if it was marked before (by a worker whose claim had run out, which sent it too: see worker.ts).
 */
export async function markMailSent(id: string, sesMessageId: string, at = now()): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: mailKey(id),
        UpdateExpression:
          'SET #state = :sent, #sentAt = :at, #messageId = :mid, #ttl = :ttl REMOVE #claim, #dueAt, #duepk, #duesk',
        ConditionExpression: '#state = :queued',
        ExpressionAttributeNames: {
          '#state': 'state',
          '#sentAt': 'sent_at',
          '#messageId': 'ses_message_id',
          '#ttl': 'ttl',
          '#claim': 'claim_until',
          '#dueAt': 'due_at',
          '#duepk': 'duepk',
          '#duesk': 'duesk',
        },
        ExpressionAttributeValues: {
          ':sent': 'sent',
          ':queued': 'queued',
          ':at': at,
          ':mid': sesMessageId,
          ':ttl': at + MAIL_SENT_RETENTION_SECONDS,
        },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Moves an unsent mail's next sweep to `dueAt` (only while it is unsent). */
export async function postponeMail(id: string, dueAt: number): Promise<void> {
  const due = mailDueKeys(id, dueAt);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: mailKey(id),
        UpdateExpression: 'SET #dueAt = :dueAt, #duepk = :duepk, #duesk = :duesk',
        ConditionExpression: '#state = :queued',
        ExpressionAttributeNames: { '#dueAt': 'due_at', '#duepk': 'duepk', '#duesk': 'duesk', '#state': 'state' },
        ExpressionAttributeValues: { ':dueAt': dueAt, ':duepk': due.duepk, ':duesk': due.duesk, ':queued': 'queued' },
      }),
    );
  } catch (error) {
    // Sent meanwhile: nothing to postpone.
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
  }
}
