import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AddressObject, simpleParser } from 'mailparser';

/**
 * Where the SES stand-in keeps what it accepted: under the data directory (`<dir>/<n>.eml`, the
 * raw MIME as SES would send it, beside `<n>.json`, its envelope), or in memory for `:memory:`.
 */
export interface StoredMail {
  raw: Buffer;
  /** The envelope's recipients (To, Cc and Bcc): whom SES would deliver it to. */
  recipients: string[];
  from: string;
  messageId: string;
  /** Unix seconds, by the service clock. */
  at: number;
}

export interface MailStorage {
  add(mail: StoredMail): Promise<void>;
  /** Every message, oldest first. */
  all(): Promise<StoredMail[]>;
}

export function createMemoryMailStorage(): MailStorage {
  const kept: StoredMail[] = [];
  return {
    add: async (mail) => {
      kept.push(mail);
    },
    all: async () => [...kept],
  };
}

export function createDiskMailStorage(dir: string): MailStorage {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const names = () =>
    readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .map((name) => name.slice(0, -'.json'.length))
      .sort();
  let next = names().length;
  return {
    add: async (mail) => {
      const name = String(next++).padStart(10, '0');
      writeFileSync(join(dir, `${name}.eml`), mail.raw, { mode: 0o600 });
      const envelope = { recipients: mail.recipients, from: mail.from, message_id: mail.messageId, at: mail.at };
      // The envelope last: a message counts once both files are there.
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(envelope), { mode: 0o600 });
    },
    all: async () =>
      names().map((name) => {
        const envelope = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as {
          recipients: string[];
          from: string;
          message_id: string;
          at: number;
        };
        return {
          raw: readFileSync(join(dir, `${name}.eml`)),
          recipients: envelope.recipients,
          from: envelope.from,
          messageId: envelope.message_id,
          at: envelope.at,
        };
      }),
  };
}

/** One message as `GET /_local/mail` lists it (contract section 14). */
export interface ListedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
  attachments: Array<{ filename: string; content_type: string; size: number }>;
}

const addressText = (value: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(value) ? value : value ? [value] : [])
    .flatMap((group) => group.value.map((address) => address.address ?? ''))
    .filter(Boolean)
    .join(', ');

/** Every http(s) URL of the HTML's links and of the text, in order, once each. */
export function linksOf(html: string, text: string): string[] {
  const found: string[] = [];
  for (const match of html.matchAll(/<a\s[^>]*href\s*=\s*"([^"]*)"/gi)) found.push(decodeEntities(match[1] ?? ''));
  for (const match of text.matchAll(/https?:\/\/[^\s<>"]+/g)) found.push(match[0]);
  return [...new Set(found.filter((link) => /^https?:\/\//i.test(link)))];
}

function decodeEntities(value: string): string {
  return value
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** The raw MIME parsed back by mailparser (nodemailer's), as listed. */
export async function listedMail(mail: StoredMail): Promise<ListedMail> {
  const parsed = await simpleParser(mail.raw);
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  const text = parsed.text ?? '';
  return {
    to: addressText(parsed.to) || mail.recipients.join(', '),
    subject: parsed.subject ?? '',
    text,
    html,
    links: linksOf(html, text),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? '',
      content_type: a.contentType,
      size: a.size,
    })),
  };
}

/** The messages whose envelope names `to` (case-insensitive; every one without it), newest first. */
export async function listMail(storage: MailStorage, to: string | undefined): Promise<ListedMail[]> {
  const wanted = to?.trim().toLowerCase();
  const all = await storage.all();
  const chosen = wanted ? all.filter((m) => m.recipients.some((r) => r.toLowerCase() === wanted)) : all;
  return Promise.all(chosen.reverse().map(listedMail));
}
