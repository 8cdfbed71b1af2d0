import { advanceClock, definedFields, freezeClock, now } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';

/**
 * Every password the service checks, counted: a guess that is refused before its hash is
 * verified costs the attacker a request and learns nothing.
 */
const verified = vi.hoisted(() => ({ secrets: [] as string[] }));
vi.mock('@svc/core', async (original) => {
  const core = await original<typeof import('@svc/core')>();
  return {
    ...core,
    verifySecret: (secret: string, stored: string) => {
      verified.secrets.push(secret);
      return core.verifySecret(secret, stored);
    },
  };
});

let partner: string;

beforeAll(async () => {
  await seedDemo();
  partner = await tokenFor(DEMO.partner);
});

beforeEach(() => {
  freezeClock(now());
});

const api = (method: string, path: string, token?: string, body?: unknown) =>
  call(method, path, { ...(token ? { token } : {}), ...definedFields({ body }) });

let sequence = 0;
function person() {
  sequence += 1;
  return { email: `guess${sequence}-${now()}@example.ch`, first_name: 'Anna', last_name: 'Muster', locale: 'de_CH' };
}

function processBody(user: Record<string, unknown>) {
  return {
    onboarding_configuration_uuid: DEMO.onboardingConfiguration,
    user,
    organisation: {
      name: `Verein ${sequence}`,
      merchant_category_code: '8398',
      main_address: { address_line1: 'Bahnhofstrasse 1', postal_code: '8001', city: 'Zürich', country: 'CH' },
      billing_information: { iban: 'CH93 0076 2011 6238 5295 7', account_holder: 'Verein' },
    },
  };
}

async function newProcess(user: Record<string, unknown> = person()) {
  const created = await api('POST', '/onboarding/processes', partner, processBody(user));
  expect(created.status, created.text).toBe(201);
  return created.json as { uuid: string; token: string };
}

/** A user with an organisation the partner is connected to already. */
async function connectedUser() {
  const user = person();
  const first = await newProcess(user);
  const done = await api('POST', `/onboarding/processes/token/${first.token}/onboard`, undefined, {
    user: { password: 'correct horse battery' },
  });
  expect(done.status, done.text).toBe(201);
  return { email: user.email, organisation: done.json.results.organisation.uuid as string };
}

const guesses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `guess-${from + i}`);

describe('guessing a password through an onboarding token', () => {
  it('verifies at most five guesses sent at once, and the right password confirms nothing after', async () => {
    const { email, organisation } = await connectedUser();
    const process = await newProcess();
    const connect = (password: string) =>
      api('POST', `/onboarding/processes/token/${process.token}/connect`, undefined, {
        email,
        password,
        organisation_uuid: organisation,
      });
    verified.secrets.length = 0;
    const answers = await Promise.all(guesses(0, 25).map(connect));
    const checked = verified.secrets.filter((s) => s.startsWith('guess-')).length;
    // Before the fix: 25 of 25 guesses verified.
    expect(checked, `${checked} of 25 guesses verified`).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(checked);
    for (const refused of answers.filter((a) => a.status !== 403)) expect([409, 429]).toContain(refused.status);

    const right = await connect('correct horse battery');
    expect(verified.secrets).not.toContain('correct horse battery');
    expect(right.status).toBe(409);
    expect(right.json.error.message[0].code).not.toBe('error.onboarding.already_connected');
    const read = await api('GET', `/onboarding/processes/${process.uuid}`, partner);
    expect(read.json.status).toBe('failed');
  });
});

describe("guessing one user's password across processes", () => {
  it('verifies at most 10 wrong passwords per address in 15 minutes, then refuses the right one too until the window ends', async () => {
    const { email, organisation } = await connectedUser();
    // Start at the beginning of a 15-minute window, so the whole attack falls in one.
    freezeClock(Math.ceil(now() / 900) * 900 + 1);
    verified.secrets.length = 0;
    const processes = await Promise.all([newProcess(), newProcess(), newProcess(), newProcess()]);
    const connect = (token: string, password: string) =>
      api('POST', `/onboarding/processes/token/${token}/connect`, undefined, {
        email,
        password,
        organisation_uuid: organisation,
      });
    // Four processes, four guesses each, all at once: 16 guesses, none over a process's bound.
    const answers = await Promise.all(
      processes.flatMap((p, i) => guesses(i * 10, 4).map((password) => connect(p.token, password))),
    );
    const checked = verified.secrets.filter((s) => s.startsWith('guess-')).length;
    expect(checked, `${checked} of 16 guesses verified`).toBe(10);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(6);
    // A fresh process, the right password: refused unverified while the window lasts.
    const fresh = await newProcess();
    const locked = await connect(fresh.token, 'correct horse battery');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
    expect(verified.secrets).not.toContain('correct horse battery');
    // The next window: the right password is checked again (the partner is connected: 409).
    advanceClock(900);
    const after = await connect(fresh.token, 'correct horse battery');
    expect(verified.secrets).toContain('correct horse battery');
    expect(after.json.error.message[0].code).toBe('error.onboarding.already_connected');
  });
});
