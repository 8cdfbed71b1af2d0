import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { logger, newUuid } from '@svc/core';
import { db, tableName } from '@svc/table';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../services/identity/src/index';
import { call, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * What someone who can read the whole table and every log line learns after card payments,
 * a new client and an onboarding process: no card number, no CVV, no client secret, no
 * onboarding token: not in plain text, not base64, not as an unkeyed SHA-256 a guess can be
 * tested against.
 */
const PAN = '4000056655665556';
const CVV = '7391';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every form of a secret that would let a reader recover or test it. */
function forms(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    sha256(secret),
    createHash('sha1').update(secret).digest('hex'),
  ];
}

async function dumpTable(): Promise<string> {
  const items: unknown[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new ScanCommand({ TableName: tableName(), ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return JSON.stringify(items);
}

beforeAll(async () => {
  await seedDemo();
});

describe('a reader of the table and the logs', () => {
  it('finds no card number, CVV, client secret or onboarding token in any recoverable form', async () => {
    logger.setLogLevel('DEBUG');
    const lines: string[] = [];
    const capture = (chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
      vi.spyOn(console, 'log').mockImplementation((...args) => capture(args.join(' '))),
    ];
    const secrets: string[] = [];
    const bodies: string[] = [];
    try {
      const token = await tokenFor(DEMO.client);
      for (const withKey of [true, false]) {
        const body = JSON.stringify({
          account_uuid: DEMO.secondAccount,
          payment_method: 'card',
          profile: 'card',
          amount: { value: '4200', currency: 'CHF' },
          payment_information: { number: PAN, expiry_month: 11, expiry_year: 2098, cvv: CVV, cardholder: 'Ada' },
          create_payment_source: true,
        });
        bodies.push(body);
        const paid = await call('POST', '/payments', {
          token,
          rawBody: body,
          headers: { 'content-type': 'application/json', ...(withKey ? { 'idempotency-key': newUuid() } : {}) },
        });
        expect(paid.status, paid.text).toBe(201);
        expect(paid.json.payment_information).toMatchObject({ last4: PAN.slice(-4) });
      }

      const client = await createClient({ grants: [{ organisation_uuid: DEMO.org }] });
      secrets.push(client.client_secret);
      await tokenFor({ id: client.client_id, secret: client.client_secret });

      const partner = await tokenFor(DEMO.partner);
      const process = await call('POST', '/onboarding/processes', {
        token: partner,
        body: { onboarding_configuration_uuid: DEMO.onboardingConfiguration },
        headers: { 'idempotency-key': newUuid() },
      });
      expect(process.status, process.text).toBe(201);
      secrets.push(process.json.token);
      // The token still works: it is recognised by its keyed hash.
      const byToken = await call('GET', `/onboarding/processes/token/${process.json.token}`);
      expect(byToken.json.uuid).toBe(process.json.uuid);
      const byUuid = await call('GET', `/onboarding/processes/${process.json.uuid}`, { token: partner });
      expect(byUuid.json.token).toBe(process.json.token);
    } finally {
      logger.setLogLevel('WARN');
      for (const spy of spies) spy.mockRestore();
    }

    const table = await dumpTable();
    const logs = lines.join('\n');
    expect(table).toContain(PAN.slice(-4));
    for (const [where, text] of [
      ['table', table],
      ['logs', logs],
    ] as const) {
      for (const secret of [PAN, ...secrets]) {
        for (const form of forms(secret)) {
          const at = text.indexOf(form);
          expect(text.slice(Math.max(0, at - 300), at + 100), `${where} holds a form of a secret`).not.toContain(form);
        }
      }
      // The CVV's four digits turn up by chance inside hex ids, so look for it as a value.
      expect(text, `${where} holds the CVV`).not.toMatch(new RegExp(`"cvv"|"${CVV}"|${sha256(CVV)}`));
      for (const body of bodies) {
        for (const form of forms(body)) expect(text, `${where} holds a form of the body`).not.toContain(form);
        // What the idempotency record would have held before: an unkeyed hash of the request.
        expect(text).not.toContain(sha256(`POST\n/payments?\n${body}`));
      }
    }
  });
});
