import { freezeClock, newUuid, now } from '@svc/core';
import { findMail } from '@svc/mail';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, seedDemo } from '../../../test/support/api';
import { LINK_LIFETIME_SECONDS, linkTokenHash, PORTAL_LINK } from './index';
import {
  linkFor,
  mailTo,
  type PortalOrganisation,
  portalOrganisation,
  redeem,
  refreshToken,
  settle,
  supporterOf,
  uniqueEmail,
} from './testing-portal';

let org: PortalOrganisation;

beforeAll(async () => {
  await seedDemo();
  // Starts the local queues and SES stand-in, which the mail is queued to.
  await settle();
  org = await portalOrganisation();
});

beforeEach(async () => {
  freezeClock(now());
  await refreshToken(org);
});

describe('send_email on POST /supporters/{uuid}/portal-links (contract sections 12 and 14)', () => {
  it('mails the link in the supporter’s language with the organisation’s brand; the link works from the mail', async () => {
    const email = uniqueEmail();
    const supporter = await supporterOf(org, { email, locale: 'fr_CH' });
    const { response, token } = await linkFor(org, supporter, { flow: 'manage', send_email: true });
    expect(response.json.expires_at).toBe(now() + LINK_LIFETIME_SECONDS);
    // The link and its mail were written together: the outbox item is named after the link.
    const hash = await linkTokenHash(token);
    expect(await PORTAL_LINK.find(hash)).toBeDefined();
    const queued = await findMail(`portal_link:${hash}`);
    expect(queued).toMatchObject({ to: email, locale: 'fr', template: 'portal_link' });
    await settle();
    const mails = await mailTo(email);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail?.subject).toBe('Gérer vos dons: Verein Sonnenschein');
    expect(mail?.links).toEqual([response.json.url]);
    expect(mail?.text).toContain(response.json.url);
    expect(mail?.text).toContain('Verein Sonnenschein');
    // The brand colour on the mail's button (white text on #0a3d62 passes 4.5:1).
    expect(mail?.html).toContain('background:#0a3d62');
    expect((await findMail(`portal_link:${hash}`))?.state).toBe('sent');
    // The mailed link opens the portal.
    const url = new URL(mail?.links[0] ?? '');
    const { response: opened } = await redeem(`${url.pathname}${url.search}`);
    expect(opened.status).toBe(303);
  });

  it('keeps a light brand colour off the mail’s white button text', async () => {
    const light = await portalOrganisation({ brand: { name: 'Gelb', color: '#ffe14d' } });
    const email = uniqueEmail();
    const supporter = await supporterOf(light, { email, locale: 'en_GB' });
    await linkFor(light, supporter, { flow: 'manage', send_email: true });
    await settle();
    const [mail] = await mailTo(email);
    expect(mail?.subject).toBe('Manage your donations: Gelb');
    expect(mail?.html).not.toContain('#ffe14d');
  });

  it('mails nothing without send_email, and nothing where no link is made', async () => {
    const email = uniqueEmail();
    const supporter = await supporterOf(org, { email });
    await linkFor(org, supporter, { flow: 'manage' });
    const off = await portalOrganisation({ enabled: false });
    const offEmail = uniqueEmail();
    const offSupporter = await supporterOf(off, { email: offEmail });
    const refused = await call('POST', `/supporters/${offSupporter}/portal-links`, {
      token: off.token,
      body: { flow: 'manage', send_email: true },
    });
    expect(refused.status).toBe(409);
    await settle();
    expect(await mailTo(email)).toEqual([]);
    expect(await mailTo(offEmail)).toEqual([]);
    expect(
      (
        await call('POST', `/supporters/${newUuid()}/portal-links`, {
          token: org.token,
          body: { flow: 'manage', send_email: true },
        })
      ).status,
    ).toBe(404);
  });
});
