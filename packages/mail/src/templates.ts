import * as z from 'zod';

/**
 * Every e-mail the service sends, in one place: per template the data it needs (checked before
 * the mail is queued) and, per locale, its subject, plain text and HTML. Values go into the HTML
 * escaped (`html` below); the plain text takes them as they are. To add a template: one entry in
 * TEMPLATES with its schema and its four locales; `queueMail` and the worker need nothing more.
 */
export const MAIL_LOCALES = ['de', 'fr', 'it', 'en'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];

/** A link the mail carries: https in deployed stages, http on loopback for the local runtime. */
const linkUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (
        url.protocol === 'https:' ||
        (url.protocol === 'http:' && /^(127\.0\.0\.1|localhost|\[::1\])$/.test(url.hostname))
      );
    } catch {
      return false;
    }
  }, 'an https URL (http only on loopback)');

const text = (max: number) => z.string().trim().min(1).max(max);
/** Unix seconds. */
const instant = z.number().int().min(0).max(253_402_300_799);
/** A calendar day, YYYY-MM-DD. */
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** The organisation's colour for the mail's button (its portal settings' brand). */
const brandColor = z.string().regex(/^#[0-9a-fA-F]{6}$/);

const SCHEMAS = {
  portal_link: z
    .object({
      organisation_name: text(200),
      url: linkUrl,
      expires_at: instant,
      brand_color: brandColor.optional(),
    })
    .strict(),
  portal_code: z
    .object({ organisation_name: text(200), code: z.string().regex(/^[0-9]{4,10}$/), expires_at: instant })
    .strict(),
  charge_reminder: z
    .object({
      organisation_name: text(200),
      /** Integer minor units, as everywhere inside the service. */
      amount: z.number().int().min(0),
      currency: z.string().regex(/^[A-Z]{3}$/),
      charge_date: day,
      /** Absent when the organisation's portal is off: the mail then says to contact it instead. */
      portal_url: linkUrl.optional(),
      brand_color: brandColor.optional(),
    })
    .strict(),
  donation_receipt: z
    .object({
      organisation_name: text(200),
      year: z.number().int().min(2000).max(2100),
      number: text(40),
      /** Integer minor units. */
      total: z.number().int().min(0),
      currency: z.string().regex(/^[A-Z]{3}$/),
      /** The number of the receipt this one replaces (a refund or lost dispute after its issue). */
      replaces: text(40).optional(),
    })
    .strict(),
} as const;

export type MailTemplate = keyof typeof SCHEMAS;
export const MAIL_TEMPLATES = Object.keys(SCHEMAS) as MailTemplate[];
export type MailData<T extends MailTemplate> = z.infer<(typeof SCHEMAS)[T]>;

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** Escapes a value for HTML text and attribute values (the five characters HTML gives meaning). */
export function html(value: string | number): string {
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const INTL_LOCALE: Record<MailLocale, string> = { de: 'de-CH', fr: 'fr-CH', it: 'it-CH', en: 'en-GB' };

/** An instant as the donor reads it, in Swiss time. */
function formatInstant(locale: MailLocale, unixSeconds: number): string {
  return new Intl.DateTimeFormat(INTL_LOCALE[locale], {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'Europe/Zurich',
  }).format(new Date(unixSeconds * 1000));
}

function formatDay(locale: MailLocale, isoDay: string): string {
  return new Intl.DateTimeFormat(INTL_LOCALE[locale], { dateStyle: 'long', timeZone: 'UTC' }).format(
    new Date(`${isoDay}T00:00:00Z`),
  );
}

/** Minor units as the donor reads them (CHF 25.00); currencies without minor units have none. */
function formatAmount(locale: MailLocale, minor: number, currency: string): string {
  const digits =
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return new Intl.NumberFormat(INTL_LOCALE[locale], { style: 'currency', currency }).format(minor / 10 ** digits);
}

/** The HTML frame every mail shares: a plain, single-column message with one button. */
function page(
  locale: MailLocale,
  title: string,
  paragraphs: string[],
  button?: { label: string; url: string },
  color = '#1f4e79',
): string {
  const body = paragraphs.map((p) => `<p>${p}</p>`).join('\n');
  const action = button
    ? `<p><a href="${html(button.url)}" style="display:inline-block;padding:10px 18px;background:${html(color)};color:#ffffff;text-decoration:none;border-radius:4px">${html(button.label)}</a></p>\n<p style="font-size:12px;color:#555555">${html(button.url)}</p>`
    : '';
  return `<!doctype html>\n<html lang="${locale}"><head><meta charset="utf-8"><title>${html(title)}</title></head>\n<body style="font-family:Arial,sans-serif;color:#222222;max-width:560px">\n${body}\n${action}\n</body></html>\n`;
}

type Renderer<T extends MailTemplate> = (locale: MailLocale, data: MailData<T>) => RenderedMail;

const WORDS = {
  portal_link: {
    de: {
      subject: 'Ihre Spenden verwalten',
      intro: 'Mit diesem Link verwalten Sie Ihre Spenden an',
      button: 'Spenden verwalten',
      valid: 'Der Link ist einmal verwendbar und gilt bis',
      ignore: 'Wenn Sie ihn nicht angefordert haben, können Sie diese E-Mail ignorieren.',
    },
    fr: {
      subject: 'Gérer vos dons',
      intro: 'Ce lien vous permet de gérer vos dons à',
      button: 'Gérer mes dons',
      valid: "Le lien s'utilise une fois et reste valable jusqu'au",
      ignore: "Si vous ne l'avez pas demandé, vous pouvez ignorer cet e-mail.",
    },
    it: {
      subject: 'Gestire le sue donazioni',
      intro: 'Con questo link può gestire le sue donazioni a',
      button: 'Gestire le donazioni',
      valid: 'Il link si usa una volta ed è valido fino al',
      ignore: "Se non l'ha richiesto, può ignorare questa e-mail.",
    },
    en: {
      subject: 'Manage your donations',
      intro: 'Use this link to manage your donations to',
      button: 'Manage my donations',
      valid: 'The link works once and is valid until',
      ignore: 'If you did not ask for it, you can ignore this e-mail.',
    },
  },
  portal_code: {
    de: {
      subject: 'Ihr Bestätigungscode',
      intro: 'Ihr Code, um die Zahlungsart für Ihre Spenden an {org} zu ändern:',
      valid: 'Er gilt bis',
      ignore: 'Geben Sie ihn niemandem weiter.',
    },
    fr: {
      subject: 'Votre code de confirmation',
      intro: 'Votre code pour changer le moyen de paiement de vos dons à {org} :',
      valid: "Il est valable jusqu'au",
      ignore: 'Ne le communiquez à personne.',
    },
    it: {
      subject: 'Il suo codice di conferma',
      intro: 'Il suo codice per cambiare il metodo di pagamento delle sue donazioni a {org}:',
      valid: 'È valido fino al',
      ignore: 'Non lo comunichi a nessuno.',
    },
    en: {
      subject: 'Your confirmation code',
      intro: 'Your code to change the payment method of your donations to {org}:',
      valid: 'It is valid until',
      ignore: 'Do not share it with anyone.',
    },
  },
  charge_reminder: {
    de: {
      subject: 'Ihre nächste Spende',
      intro: 'Am {date} belasten wir {amount} für Ihre Spende an {org}.',
      button: 'Spende ansehen oder ändern',
      change: 'Sie können den Betrag, das Datum oder die Zahlungsart vorher ändern, aussetzen oder kündigen.',
      contact: 'Für Änderungen wenden Sie sich bitte an {org}.',
    },
    fr: {
      subject: 'Votre prochain don',
      intro: 'Le {date}, nous débiterons {amount} pour votre don à {org}.',
      button: 'Voir ou modifier mon don',
      change:
        "Vous pouvez modifier le montant, la date ou le moyen de paiement avant cette date, faire une pause ou l'annuler.",
      contact: 'Pour toute modification, veuillez contacter {org}.',
    },
    it: {
      subject: 'La sua prossima donazione',
      intro: 'Il {date} addebiteremo {amount} per la sua donazione a {org}.',
      button: 'Vedere o modificare la donazione',
      change: 'Prima di allora può modificare importo, data o metodo di pagamento, sospenderla o annullarla.',
      contact: 'Per modifiche si rivolga a {org}.',
    },
    en: {
      subject: 'Your next donation',
      intro: 'On {date} we will charge {amount} for your donation to {org}.',
      button: 'View or change my donation',
      change: 'Before then you can change the amount, the date or the payment method, pause it or cancel it.',
      contact: 'To change it, please contact {org}.',
    },
  },
  donation_receipt: {
    de: {
      subject: 'Ihre Spendenbestätigung {year}',
      intro: 'Herzlichen Dank für Ihre Spenden an {org} im Jahr {year}: insgesamt {amount}.',
      attached: 'Im Anhang finden Sie Ihre Spendenbestätigung Nr. {number} für Ihre Steuererklärung.',
      replaces: 'Sie ersetzt die Bestätigung Nr. {replaces}, die damit ungültig ist.',
    },
    fr: {
      subject: 'Votre attestation de dons {year}',
      intro: 'Merci pour vos dons à {org} en {year} : {amount} au total.',
      attached: 'Vous trouverez en pièce jointe votre attestation n° {number} pour votre déclaration d’impôts.',
      replaces: 'Elle remplace l’attestation n° {replaces}, qui n’est plus valable.',
    },
    it: {
      subject: 'La sua attestazione di donazione {year}',
      intro: 'Grazie per le sue donazioni a {org} nel {year}: {amount} in totale.',
      attached: 'In allegato trova la sua attestazione n. {number} per la dichiarazione d’imposta.',
      replaces: 'Sostituisce l’attestazione n. {replaces}, che non è più valida.',
    },
    en: {
      subject: 'Your donation receipt {year}',
      intro: 'Thank you for your donations to {org} in {year}: {amount} in all.',
      attached: 'Your receipt no. {number} for your tax return is attached.',
      replaces: 'It replaces receipt no. {replaces}, which is no longer valid.',
    },
  },
} as const;

/** `{name}` placeholders filled with values, each made safe by `safe` first. */
function fill(template: string, values: Record<string, string>, safe: (value: string) => string): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => safe(values[name] ?? ''));
}
const plain = (value: string) => value;

const RENDERERS: { [T in MailTemplate]: Renderer<T> } = {
  portal_link: (locale, data) => {
    const w = WORDS.portal_link[locale];
    const until = formatInstant(locale, data.expires_at);
    const subject = `${w.subject}: ${data.organisation_name}`;
    return {
      subject,
      text: `${w.intro} ${data.organisation_name}:\n\n${data.url}\n\n${w.valid} ${until}.\n${w.ignore}\n`,
      html: page(
        locale,
        subject,
        [`${html(w.intro)} ${html(data.organisation_name)}.`, `${html(w.valid)} ${html(until)}.`, html(w.ignore)],
        { label: w.button, url: data.url },
        data.brand_color,
      ),
    };
  },
  portal_code: (locale, data) => {
    const w = WORDS.portal_code[locale];
    const until = formatInstant(locale, data.expires_at);
    const values = { org: data.organisation_name };
    return {
      subject: w.subject,
      text: `${fill(w.intro, values, plain)}\n\n${data.code}\n\n${w.valid} ${until}. ${w.ignore}\n`,
      html: page(locale, w.subject, [
        fill(w.intro, values, html),
        `<strong style="font-size:24px;letter-spacing:4px">${html(data.code)}</strong>`,
        `${html(w.valid)} ${html(until)}. ${html(w.ignore)}`,
      ]),
    };
  },
  charge_reminder: (locale, data) => {
    const w = WORDS.charge_reminder[locale];
    const values = {
      org: data.organisation_name,
      date: formatDay(locale, data.charge_date),
      amount: formatAmount(locale, data.amount, data.currency),
    };
    const subject = `${w.subject}: ${data.organisation_name}`;
    const url = data.portal_url;
    if (url === undefined) {
      // The organisation's portal is off: the date and amount still, and whom to ask instead.
      return {
        subject,
        text: `${fill(w.intro, values, plain)}\n${fill(w.contact, values, plain)}\n`,
        html: page(locale, subject, [fill(w.intro, values, html), fill(w.contact, values, html)]),
      };
    }
    return {
      subject,
      text: `${fill(w.intro, values, plain)}\n${w.change}\n\n${url}\n`,
      html: page(
        locale,
        subject,
        [fill(w.intro, values, html), html(w.change)],
        { label: w.button, url },
        data.brand_color,
      ),
    };
  },
  donation_receipt: (locale, data) => {
    const w = WORDS.donation_receipt[locale];
    const values = {
      org: data.organisation_name,
      year: String(data.year),
      number: data.number,
      replaces: data.replaces ?? '',
      amount: formatAmount(locale, data.total, data.currency),
    };
    const subject = `${fill(w.subject, values, plain)}: ${data.organisation_name}`;
    const lines = [w.intro, w.attached, ...(data.replaces ? [w.replaces] : [])];
    return {
      subject,
      text: `${lines.map((line) => fill(line, values, plain)).join('\n')}\n`,
      html: page(
        locale,
        subject,
        lines.map((line) => fill(line, values, html)),
      ),
    };
  },
};

/** The template's data checked (a ZodError names what is wrong), as it will be rendered. */
export function parseMailData<T extends MailTemplate>(template: T, data: unknown): MailData<T> {
  const schema = SCHEMAS[template] as unknown as z.ZodType<MailData<T>>;
  return schema.parse(data);
}

export function isMailTemplate(value: unknown): value is MailTemplate {
  return typeof value === 'string' && Object.hasOwn(SCHEMAS, value);
}

export function renderMail<T extends MailTemplate>(template: T, locale: MailLocale, data: MailData<T>): RenderedMail {
  return (RENDERERS[template] as Renderer<T>)(locale, parseMailData(template, data));
}
