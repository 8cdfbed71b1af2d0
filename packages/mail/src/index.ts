export { type ComposeInput, composeMail, type MailAttachment, messageIdOf } from './compose';
export {
  enqueueMail,
  findMail,
  MAIL,
  MAIL_DUE_PREFIX,
  MAIL_PREFIX,
  MAIL_REQUEUE_SECONDS,
  MAIL_SHARDS,
  type MailRecord,
  mailOutboxWrite,
  type QueuedMail,
  type QueueMailInput,
  queueMail,
  resetMailQueueClient,
} from './outbox';
export {
  html as escapeHtml,
  isMailTemplate,
  MAIL_LOCALES,
  MAIL_TEMPLATES,
  type MailData,
  type MailLocale,
  type MailTemplate,
  renderMail,
} from './templates';
export {
  MAIL_CLAIM_SECONDS,
  MAIL_MAX_RECEIVES,
  MAIL_WORKER_TIMEOUT_SECONDS,
  type MailSweep,
  processMailBatch,
  resetMailSender,
  sendQueuedMail,
  sweepUnsentMail,
} from './worker';
