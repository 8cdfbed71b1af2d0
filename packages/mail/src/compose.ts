import MailComposer from 'nodemailer/lib/mail-composer';
import { type MailData, type MailLocale, type MailTemplate, renderMail } from './templates';

/** A file sent with a mail (a receipt): at most MAX_ATTACHMENT_BYTES, as it is kept in the outbox item. */
export interface MailAttachment {
  filename: string;
  content_type: string;
  /** The bytes, base64. */
  content_base64: string;
}

export interface ComposeInput<T extends MailTemplate = MailTemplate> {
  /** The mail's own id: its Message-ID is made from it, so every attempt sends the same message. */
  id: string;
  from: string;
  to: string;
  locale: MailLocale;
  template: T;
  data: MailData<T>;
  attachments?: readonly MailAttachment[];
  /** When it was queued (Unix seconds): its Date header, the same on every attempt. */
  date: number;
}

/** The domain of Message-IDs; any stable name of ours does (RFC 5322 3.6.4: unique left part). */
const MESSAGE_ID_DOMAIN = 'mail.svc-fundraising';

export function messageIdOf(id: string): string {
  return `<${Buffer.from(id).toString('base64url')}@${MESSAGE_ID_DOMAIN}>`;
}

/**
 * The mail as raw MIME (RFC 5322 and 2045–2049) by nodemailer's composer: multipart/alternative
 * with the plain text and the HTML, attachments beside them (multipart/mixed), headers encoded
 * as RFC 2047 words where not ASCII, bodies quoted-printable or base64 so no line passes the
 * 1,000 characters SES takes ("The length of any single line of text in the message can't exceed
 * 1,000 characters", SESv2 API reference, RawMessage). SES sends Raw content as given.
 */
export async function composeMail(input: ComposeInput): Promise<Buffer> {
  const rendered = renderMail(input.template, input.locale, input.data);
  const composer = new MailComposer({
    from: input.from,
    to: input.to,
    subject: rendered.subject,
    text: rendered.text,
    html: rendered.html,
    messageId: messageIdOf(input.id),
    date: new Date(input.date * 1000),
    headers: { 'Content-Language': input.locale },
    // Never a file path or URL: only the bytes given.
    disableFileAccess: true,
    disableUrlAccess: true,
    attachments: (input.attachments ?? []).map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      content: Buffer.from(a.content_base64, 'base64'),
    })),
  });
  return composer.compile().build();
}
