import { logger, ValidationError } from '@svc/core';
import { MAIL_LOCALES, type MailLocale, queueMail } from '@svc/mail';
import { findSupporter } from '@svc/supporters';
import {
  RECEIPT,
  type ReceiptRecord,
  type ReceiptSettingsRecord,
  receiptNumber,
} from '../repository/receipt-repository';
import { pdfOf } from './pdf';

/** The language a receipt's mail is written in: the supporter's, else the country's. */
function mailLocale(locale: string | undefined, settings: ReceiptSettingsRecord): MailLocale {
  const language = locale?.slice(0, 2).toLowerCase();
  if (language && (MAIL_LOCALES as readonly string[]).includes(language)) return language as MailLocale;
  return settings.country === 'GB' ? 'en' : 'de';
}

/**
 * Mails each receipt to its supporter with its PDF attached (a batch with `send_email`). The mail's
 * id is the receipt's, so a page run again queues each mail once (the outbox's conditional write)
 * and a mail already sent is not sent again. Supporters without an e-mail are counted, not mailed.
 */
export async function mailReceipts(
  settings: ReceiptSettingsRecord,
  receipts: readonly ReceiptRecord[],
): Promise<{ emailed: number; without_email: number; mail_failed: number }> {
  let emailed = 0;
  let withoutEmail = 0;
  let failed = 0;
  for (const receipt of receipts) {
    const supporter = await findSupporter(receipt.supporter_uuid);
    if (!supporter?.email) {
      withoutEmail += 1;
      continue;
    }
    const replaced = receipt.replaces ? await RECEIPT.find(receipt.replaces) : undefined;
    const number = receiptNumber(receipt);
    const pdf = await pdfOf(receipt);
    const queued = queueMail({
      id: `receipt:${receipt.uuid}`,
      to: supporter.email,
      locale: mailLocale(supporter.locale, settings),
      template: 'donation_receipt',
      data: {
        organisation_name: settings.legal_name,
        year: receipt.year,
        number,
        total: receipt.total_minor,
        currency: receipt.currency,
        ...(replaced ? { replaces: receiptNumber(replaced) } : {}),
      },
      attachments: [
        {
          filename: `receipt-${number}.pdf`,
          content_type: 'application/pdf',
          content_base64: Buffer.from(pdf).toString('base64'),
        },
      ],
    });
    // A mail the outbox refuses (an address SES cannot take, a document too large) leaves the
    // receipt issued and the others mailed; it is counted and logged. Other failures are the page's.
    const refused = await queued.then(
      () => false,
      (error: unknown) => {
        if (!(error instanceof ValidationError)) throw error;
        logger.warn('A receipt could not be mailed', { receipt: receipt.uuid, error });
        return true;
      },
    );
    if (refused) failed += 1;
    else emailed += 1;
  }
  if (withoutEmail > 0) logger.info('Receipts not mailed: their supporters have no e-mail', { count: withoutEmail });
  return { emailed, without_email: withoutEmail, mail_failed: failed };
}
