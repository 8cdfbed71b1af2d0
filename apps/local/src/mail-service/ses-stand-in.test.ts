import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MailService, startMailService } from './server';
import { createMemoryMailStorage, listMail, type MailStorage } from './storage';

const NOW = 1_800_000_000;
let service: MailService;
let storage: MailStorage;
let ses: SESv2Client;

const client = (secretAccessKey = 'local-secret') =>
  new SESv2Client({
    endpoint: service.url,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey },
    maxAttempts: 1,
    // Signed at the stand-in's clock, as a real client is signed at the real one.
    systemClockOffset: NOW * 1000 - Date.now(),
  });

const raw = (headers: string, body = 'Hello https://example.org/a') =>
  Buffer.from(`${headers}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`);

const GOOD = raw('From: no-reply@mail.example.org\r\nTo: donor@example.com\r\nSubject: Hi');

async function refusal(
  command: SendEmailCommand,
  sesClient = ses,
): Promise<{ name: string; status?: number; message: string }> {
  try {
    await sesClient.send(command);
  } catch (error) {
    const e = error as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('SendEmail was accepted');
}

beforeAll(async () => {
  storage = createMemoryMailStorage();
  service = await startMailService({
    storage,
    identities: ['mail.example.org'],
    credentials: { local: 'local-secret' },
    now: () => NOW,
    region: 'eu-central-2',
  });
  ses = client();
});

afterAll(async () => {
  await service.close();
});

describe('the local SES (API v2) stand-in', () => {
  it('takes SendEmail with Raw content from the SDK and keeps the message for its envelope recipients', async () => {
    const out = await ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'no-reply@mail.example.org',
        Destination: { ToAddresses: ['donor@example.com'] },
        Content: { Raw: { Data: GOOD } },
      }),
    );
    expect(out.MessageId).toMatch(/-local$/);
    const listed = await listMail(storage, 'DONOR@example.com');
    expect(listed).toEqual([
      {
        to: 'donor@example.com',
        subject: 'Hi',
        text: 'Hello https://example.org/a\n',
        html: '',
        links: ['https://example.org/a'],
        attachments: [],
      },
    ]);
    expect(await listMail(storage, 'other@example.com')).toEqual([]);
  });

  it('refuses what SES refuses, with its error names and statuses', async () => {
    // Content is the one required member.
    expect(await refusal(new SendEmailCommand({ Content: undefined as never }))).toMatchObject({
      name: 'BadRequestException',
      status: 400,
    });
    // A From that is no verified identity (address or domain).
    expect(
      await refusal(
        new SendEmailCommand({
          Content: { Raw: { Data: raw('From: someone@elsewhere.example\r\nTo: d@example.com\r\nSubject: x') } },
        }),
      ),
    ).toMatchObject({
      name: 'MessageRejected',
      status: 400,
      message: expect.stringContaining('Email address is not verified'),
    });
    // A raw message without the blank line between header and body.
    expect(
      await refusal(
        new SendEmailCommand({
          Content: { Raw: { Data: Buffer.from('From: no-reply@mail.example.org\r\nTo: d@example.com') } },
        }),
      ),
    ).toMatchObject({
      name: 'BadRequestException',
    });
    // A line longer than 1,000 characters.
    expect(
      await refusal(
        new SendEmailCommand({
          Content: {
            Raw: { Data: raw('From: no-reply@mail.example.org\r\nTo: d@example.com\r\nSubject: x', 'a'.repeat(1001)) },
          },
        }),
      ),
    ).toMatchObject({ name: 'BadRequestException' });
    // No recipient anywhere.
    expect(
      await refusal(
        new SendEmailCommand({ Content: { Raw: { Data: raw('From: no-reply@mail.example.org\r\nSubject: x') } } }),
      ),
    ).toMatchObject({
      name: 'BadRequestException',
    });
    // Simple content needs a subject.
    expect(
      await refusal(
        new SendEmailCommand({
          FromEmailAddress: 'no-reply@mail.example.org',
          Destination: { ToAddresses: ['d@example.com'] },
          Content: { Simple: { Subject: undefined as never, Body: { Text: { Data: 'x' } } } },
        }),
      ),
    ).toMatchObject({ name: 'BadRequestException' });
    // More than 50 recipients.
    expect(
      await refusal(
        new SendEmailCommand({
          Destination: { ToAddresses: Array.from({ length: 51 }, (_, i) => `d${i}@example.com`) },
          Content: { Raw: { Data: GOOD } },
        }),
      ),
    ).toMatchObject({ name: 'MessageRejected' });
    expect(await listMail(storage, 'd@example.com')).toEqual([]);
  });

  it('checks the SigV4 signature as AWS does: unsigned, unknown key or wrong secret is a 403', async () => {
    const unsigned = await fetch(`${service.url}/v2/email/outbound-emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Content: { Raw: { Data: GOOD.toString('base64') } } }),
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
    expect(await refusal(new SendEmailCommand({ Content: { Raw: { Data: GOOD } } }), client('wrong'))).toMatchObject({
      name: 'InvalidSignatureException',
      status: 403,
    });
  });

  it('answers injected faults as SES throttling and internal errors, then sends again', async () => {
    service.setFault({ mode: 'throttle', remaining: 1 });
    expect(await refusal(new SendEmailCommand({ Content: { Raw: { Data: GOOD } } }))).toMatchObject({
      name: 'TooManyRequestsException',
      status: 429,
    });
    service.setFault({ mode: 'error', remaining: 1 });
    expect(await refusal(new SendEmailCommand({ Content: { Raw: { Data: GOOD } } }))).toMatchObject({
      name: 'InternalServiceErrorException',
      status: 500,
    });
    const before = (await listMail(storage, 'donor@example.com')).length;
    await ses.send(new SendEmailCommand({ Content: { Raw: { Data: GOOD } } }));
    expect(await listMail(storage, 'donor@example.com')).toHaveLength(before + 1);
  });
});
