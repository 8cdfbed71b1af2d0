import { join } from 'node:path';
import { asFunction, now } from '@svc/core';
import { resetMailSender, sweepUnsentMail } from '@svc/mail';
import { registerBackgroundTask } from './background';
import { type MailFault, type MailService, startMailService } from './mail-service/server';
import {
  createDiskMailStorage,
  createMemoryMailStorage,
  type ListedMail,
  listMail,
  type MailStorage,
} from './mail-service/storage';
import { drainMailQueue } from './queues';

/**
 * Mail on one machine: the SES stand-in (mail-service/, SendEmail of the SESv2 API as the SDK
 * sends it) keeps every accepted message under the data directory (`<data>/mail/`, in memory for
 * `:memory:`); the mail worker reaches it through AWS_ENDPOINT_URL_SESV2, as it reaches SES in
 * AWS; the mail queue is the SQS stand-in's, drained like the other queues, and the sweeper runs
 * with them (it finds only what is due by the service clock). `GET /_local/mail` lists messages.
 */
export const LOCAL_MAIL_FROM = 'no-reply@svc-local.example';

let service: Promise<{ service: MailService; storage: MailStorage }> | undefined;

export function ensureLocalMail(): Promise<{ service: MailService; storage: MailStorage }> {
  service ??= start().catch((error: unknown) => {
    service = undefined;
    throw error;
  });
  return service;
}

async function start() {
  const dataDir = process.env.SVC_DATA_DIR ?? '.data';
  const storage = dataDir === ':memory:' ? createMemoryMailStorage() : createDiskMailStorage(join(dataDir, 'mail'));
  process.env.SVC_MAIL_FROM ??= LOCAL_MAIL_FROM;
  const from = process.env.SVC_MAIL_FROM;
  const started = await startMailService({
    storage,
    // The stage's identity: the sending address's domain, as a deployed stage verifies it.
    identities: [from.slice(from.lastIndexOf('@') + 1)],
    credentials: { [process.env.AWS_ACCESS_KEY_ID ?? 'local']: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' },
    now,
    region: process.env.AWS_REGION ?? 'eu-central-2',
  });
  process.env.AWS_ENDPOINT_URL_SESV2 = started.url;
  resetMailSender();
  return { service: started, storage };
}

export async function stopLocalMail(): Promise<void> {
  const running = service;
  service = undefined;
  if (running) await (await running).service.close();
}

/** `GET /_local/mail?to=`: newest first. */
export async function localMail(to: string | undefined): Promise<ListedMail[]> {
  const { storage } = await ensureLocalMail();
  return listMail(storage, to);
}

/** What the stand-in's next SendEmail calls answer instead of sending (none: `undefined`). */
export async function setLocalMailFault(fault: MailFault | undefined): Promise<void> {
  (await ensureLocalMail()).service.setFault(fault);
}

registerBackgroundTask({
  name: 'mail',
  intervalMs: 1_000,
  runOnce: async () => {
    await ensureLocalMail();
    const swept = await asFunction('mail-sweeper', () => sweepUnsentMail());
    return swept.requeued + (await drainMailQueue());
  },
});
