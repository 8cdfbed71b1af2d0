import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { composeMail, messageIdOf } from './compose';
import { MAIL_LOCALES, MAIL_TEMPLATES, renderMail } from './templates';

const LINK = 'https://donate.example.org/portal?token=abc&x=1';

const SAMPLES = {
  portal_link: { organisation_name: 'Hilfe & <Co>', url: LINK, expires_at: 1_900_000_000 },
  portal_code: { organisation_name: 'Hilfe & <Co>', code: '482913', expires_at: 1_900_000_000 },
  charge_reminder: {
    organisation_name: 'Hilfe & <Co>',
    amount: 2500,
    currency: 'CHF',
    charge_date: '2027-03-01',
    portal_url: LINK,
  },
  donation_receipt: {
    organisation_name: 'Hilfe & <Co>',
    year: 2026,
    number: '2026-000042',
    total: 123456,
    currency: 'CHF',
    replaces: '2026-000007',
  },
} as const;

describe('composing a mail', () => {
  it('is MIME that parses back with its subject, plain text, HTML, links and attachments', async () => {
    const raw = await composeMail({
      id: 'portal_link:1',
      from: 'no-reply@mail.example.org',
      to: 'donor@example.com',
      locale: 'de',
      template: 'portal_link',
      data: SAMPLES.portal_link,
      attachments: [
        {
          filename: 'quittung.pdf',
          content_type: 'application/pdf',
          content_base64: Buffer.from('%PDF-1.4').toString('base64'),
        },
      ],
      date: 1_800_000_000,
    });
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('Ihre Spenden verwalten: Hilfe & <Co>');
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : '').toBe('donor@example.com');
    expect(parsed.messageId).toBe(messageIdOf('portal_link:1'));
    expect(parsed.date?.getTime()).toBe(1_800_000_000_000);
    expect(parsed.text).toContain(LINK);
    expect(parsed.text).toContain('Hilfe & <Co>');
    // Values are escaped in the HTML: the organisation's name is text, never markup.
    expect(parsed.html).toContain('Hilfe &amp; &lt;Co&gt;');
    expect(parsed.html).not.toContain('<Co>');
    expect(parsed.html).toContain(`href="${LINK.replace('&', '&amp;')}"`);
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.size])).toEqual([
      ['quittung.pdf', 'application/pdf', 8],
    ]);
    // RFC 5321's (and SES's) 1,000 characters a line.
    expect(
      raw
        .toString('latin1')
        .split(/\r?\n/)
        .every((line) => line.length <= 998),
    ).toBe(true);
  });

  it('is the same message on every attempt (Message-ID and Date from the mail, not the send)', async () => {
    const input = {
      id: 'reminder:sub:2027-03-01',
      from: 'no-reply@mail.example.org',
      to: 'donor@example.com',
      locale: 'fr',
      template: 'charge_reminder',
      data: SAMPLES.charge_reminder,
      date: 1_800_000_000,
    } as const;
    const [a, b] = await Promise.all([composeMail(input), composeMail(input)]);
    const headers = (raw: Buffer) =>
      raw
        .toString('latin1')
        .split(/\r?\n\r?\n/)[0]
        ?.replace(/boundary="[^"]+"/g, '');
    expect(headers(a)).toBe(headers(b));
  });

  it('has every template in every locale, plain text and HTML, each carrying its values', () => {
    for (const template of MAIL_TEMPLATES) {
      for (const locale of MAIL_LOCALES) {
        const rendered = renderMail(template, locale, SAMPLES[template] as never);
        expect(rendered.subject.length, `${template} ${locale}`).toBeGreaterThan(3);
        expect(rendered.html).toMatch(new RegExp(`^<!doctype html>\\n<html lang="${locale}">`));
        if (template === 'portal_code') {
          expect(rendered.text).toContain('482913');
          expect(rendered.html).toContain('482913');
        } else if (template === 'donation_receipt') {
          // The receipt's number, the one it replaces and the total to the cent, in every language.
          expect(rendered.text).toContain('2026-000042');
          expect(rendered.text).toContain('2026-000007');
          expect(rendered.text).toMatch(/1.?234[.,]56/);
        } else {
          expect(rendered.text).toContain(LINK);
        }
        expect(rendered.html).not.toContain('<Co>');
      }
    }
    expect(renderMail('charge_reminder', 'de', SAMPLES.charge_reminder).text).toMatch(/CHF.25\.00/);
    expect(renderMail('charge_reminder', 'en', SAMPLES.charge_reminder).text).toContain('1 March 2027');
  });

  it('a charge reminder without a portal link (the portal is off) names whom to contact, and has no button', () => {
    const { portal_url: _link, ...data } = SAMPLES.charge_reminder;
    for (const locale of MAIL_LOCALES) {
      const rendered = renderMail('charge_reminder', locale, data);
      expect(rendered.text).toMatch(/CHF.25\.00|25\.00.CHF/);
      expect(rendered.text).toContain('Hilfe & <Co>');
      expect(rendered.text).not.toContain('http');
      expect(rendered.html).not.toContain('<a ');
      expect(rendered.html).toContain('Hilfe &amp; &lt;Co&gt;');
    }
    expect(renderMail('charge_reminder', 'en', data).text.replace(/\s/g, ' ')).toBe(
      'On 1 March 2027 we will charge CHF 25.00 for your donation to Hilfe & <Co>. To change it, please contact Hilfe & <Co>. ',
    );
    const branded = renderMail('charge_reminder', 'fr', { ...SAMPLES.charge_reminder, brand_color: '#0a7d3b' });
    expect(branded.html).toContain('background:#0a7d3b');
  });

  it('refuses data a template does not take', () => {
    expect(() => renderMail('portal_link', 'en', { ...SAMPLES.portal_link, url: 'javascript:alert(1)' })).toThrow();
    expect(() => renderMail('portal_code', 'en', { ...SAMPLES.portal_code, code: '12ab' })).toThrow();
    expect(() => renderMail('charge_reminder', 'en', { ...SAMPLES.charge_reminder, amount: 25.5 })).toThrow();
  });
});
