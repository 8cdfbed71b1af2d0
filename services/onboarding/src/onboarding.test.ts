import { advanceClock, definedFields, freezeClock, now } from '@svc/core';
import { addGrant, findClient, upsertClient } from '@svc/identity';
import * as table from '@svc/table';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { streamEvents } from '../../../test/support/stream';
import { PROCESS_LIFETIME_SECONDS } from './domain/processes';

let partner: string;
let customer: string;
let operator: string;
let otherClient: string;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver((_request, response) => {
    response.writeHead(200);
    response.end('ok');
  }, inject('receiverTls'));
  await seedDemo();
  partner = await tokenFor(DEMO.partner);
  customer = await tokenFor(DEMO.client);
  operator = await tokenFor(DEMO.operator);
  otherClient = await tokenFor(DEMO.otherClient);
});

beforeEach(() => {
  freezeClock(now());
});

afterAll(async () => {
  await receiver.close();
});

const api = (method: string, path: string, token?: string, body?: unknown) =>
  call(method, path, { ...(token ? { token } : {}), ...definedFields({ body }) });

let sequence = 0;
/** A fresh, unique person and organisation for each process. */
function shapeA(overrides: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    external_id: `crm-${sequence}`,
    onboarding_configuration_uuid: DEMO.onboardingConfiguration,
    user: { email: `person${sequence}-${now()}@example.ch`, first_name: 'Anna', last_name: 'Muster', locale: 'de_CH' },
    organisation: {
      name: `Verein ${sequence}`,
      merchant_category_code: '8398',
      main_address: {
        address_line1: 'Bahnhofstrasse 1',
        address_line2: '',
        postal_code: '8001',
        city: 'Zürich',
        country: 'CH',
      },
      billing_information: { iban: 'CH93 0076 2011 6238 5295 7', bank_name: 'Demo Bank', account_holder: 'Verein' },
    },
    ...overrides,
  };
}

async function newProcess(body: Record<string, unknown> = shapeA()) {
  const created = await api('POST', '/onboarding/processes', partner, body);
  expect(created.status, created.text).toBe(201);
  return created.json;
}

async function onboard(token: string, body: unknown = { user: { password: 'correct horse battery' } }) {
  return api('POST', `/onboarding/processes/token/${encodeURIComponent(token)}/onboard`, undefined, body);
}

describe('creating a process', () => {
  it('answers shape A with its token, expiry, label and the onboarding URL', async () => {
    const body = shapeA();
    const created = await newProcess(body);
    expect(created).toMatchObject({
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      label: 'pending',
      status: 'pending',
      expired: false,
      external_id: body.external_id,
      initialisation_data: {
        user: { email: body.user.email, locale: 'de_CH' },
        organisation: { name: body.organisation.name },
      },
    });
    expect(created.expires_at).toBe(created.created + PROCESS_LIFETIME_SECONDS);
    // Without SVC_CONNECT_URL: the service's own /connect.
    expect(created.onboarding_url).toBe(`https://127.0.0.1:3000/connect?token=${created.token}`);
    expect(created.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.partner_integration_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.initialisation_data.organisation.billing_information.iban).toBe('CH9300762011623852957');
  });

  it('points onboarding_url at SVC_CONNECT_URL when set', async () => {
    process.env.SVC_CONNECT_URL = 'https://connect.example.org/connect';
    try {
      const created = await newProcess();
      expect(created.onboarding_url).toBe(`https://connect.example.org/connect?token=${created.token}`);
    } finally {
      delete process.env.SVC_CONNECT_URL;
    }
  });

  it('takes shape B with approval-event webhooks and never shows their secrets', async () => {
    const { user, organisation } = shapeA();
    const created = await newProcess({
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      initialisation_data: {
        user,
        organisation,
        event_subscriptions: [
          {
            event_name: 'svc.organisations.organisation.approved',
            endpoint: 'https://hooks.example.org/approved',
            username: 'hook',
            password: 'hook-password',
            hmac_key: 'hook-hmac-key',
          },
        ],
      },
    });
    expect(created.initialisation_data.event_subscriptions).toEqual([
      {
        event_name: 'svc.organisations.organisation.approved',
        endpoint: 'https://hooks.example.org/approved',
        username: 'hook',
      },
    ]);
    expect(JSON.stringify(created)).not.toContain('hook-password');
    expect(JSON.stringify(created)).not.toContain('hook-hmac-key');
  });

  it.each([
    ['an unknown user locale', { user: { locale: 'de_DE' } }, 'user.locale'],
    [
      'a merchant category code outside rule 9',
      { organisation: { merchant_category_code: '5999' } },
      'organisation.merchant_category_code',
    ],
    [
      'a broken IBAN',
      { organisation: { billing_information: { iban: 'CH93 0076 2011 6238 5295 8' } } },
      'organisation.billing_information.iban',
    ],
    ['a broken e-mail address', { user: { email: 'not-an-address' } }, 'user.email'],
    [
      'an address with an unknown field',
      { organisation: { main_address: { street: 'x' } } },
      'organisation.main_address.street',
    ],
    [
      'a country that is not two letters',
      { organisation: { main_address: { country: 'Schweiz' } } },
      'organisation.main_address.country',
    ],
  ])('refuses %s with 400 naming the field', async (_label, overrides, property) => {
    const response = await api('POST', '/onboarding/processes', partner, {
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      ...overrides,
    });
    expect(response.status).toBe(400);
    expect(response.json.error.message.map((d: { property: string }) => d.property)).toContain(property);
  });

  it('refuses onboarding events in event_subscriptions (rule 10) and accepts approval events (rule 11)', async () => {
    for (const event_name of ['svc.onboarding.onboarding_process.succeeded', 'svc.payments.payment.succeeded']) {
      const response = await api('POST', '/onboarding/processes', partner, {
        onboarding_configuration_uuid: DEMO.onboardingConfiguration,
        initialisation_data: { event_subscriptions: [{ event_name, endpoint: 'https://hooks.example.org/x' }] },
      });
      expect(response.status).toBe(400);
      expect(response.json.error.message[0].property).toBe('initialisation_data.event_subscriptions.0.event_name');
    }
    const plain = await api('POST', '/onboarding/processes', partner, {
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      initialisation_data: {
        event_subscriptions: [
          { event_name: 'svc.organisations.organisation.approval_requested', endpoint: 'http://hooks.example.org/x' },
        ],
      },
    });
    expect(plain.status).toBe(400);
  });

  it('refuses a body that mixes shapes A and B', async () => {
    const { user } = shapeA();
    const response = await api('POST', '/onboarding/processes', partner, {
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      user,
      initialisation_data: { organisation: { name: 'x' } },
    });
    expect(response.status).toBe(400);
  });

  it('is for the partner of the configuration only: 403 for others, 404 for an unknown configuration', async () => {
    expect((await api('POST', '/onboarding/processes', customer, shapeA())).status).toBe(403);
    const unknown = await api('POST', '/onboarding/processes', partner, {
      onboarding_configuration_uuid: '00000000-0000-4000-8000-0000000000aa',
    });
    expect(unknown.status).toBe(404);
  });
});

describe('reading a process', () => {
  it('by uuid for its partner (403 for others, 404 unknown) and by token for anyone holding it', async () => {
    const created = await newProcess();
    const byUuid = await api('GET', `/onboarding/processes/${created.uuid}`, partner);
    expect(byUuid.status).toBe(200);
    expect(byUuid.json).toEqual(created);
    expect((await api('GET', `/onboarding/processes/${created.uuid}`, customer)).status).toBe(403);
    expect((await api('GET', '/onboarding/processes/00000000-0000-4000-8000-0000000000ab', partner)).status).toBe(404);
    const byToken = await api('GET', `/onboarding/processes/token/${created.token}`);
    expect(byToken.status).toBe(200);
    expect(byToken.json.uuid).toBe(created.uuid);
    expect((await api('GET', '/onboarding/processes/token/not-a-token')).status).toBe(404);
  });

  it('shows it expired once the clock passes expires_at', async () => {
    const created = await newProcess();
    advanceClock(PROCESS_LIFETIME_SECONDS - 1);
    expect((await api('GET', `/onboarding/processes/token/${created.token}`)).json.expired).toBe(false);
    advanceClock(1);
    expect((await api('GET', `/onboarding/processes/token/${created.token}`)).json.expired).toBe(true);
  });
});

describe('executing onboarding', () => {
  it('creates the organisation (approval pending), its account, the user and the integration; the partner gains access', async () => {
    const created = await newProcess();
    const done = await onboard(created.token);
    expect(done.status, done.text).toBe(201);
    expect(done.json).toMatchObject({ uuid: created.uuid, status: 'succeeded', label: 'succeeded' });
    const { organisation, accounts, user } = done.json.results;
    expect(user.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(accounts.main.uuid).toMatch(/^[0-9a-f-]{36}$/);

    const org = await api('GET', `/organisations/${organisation.uuid}`, partner);
    expect(org.status).toBe(200);
    expect(org.json).toMatchObject({
      name: created.initialisation_data.organisation.name,
      approval_status: 'approval_pending',
      merchant_category_code: '8398',
      locale: 'de_CH',
      accounts: [{ uuid: accounts.main.uuid }],
    });
    const billing = await api('GET', `/accounts/${accounts.main.uuid}/billing-data`, partner);
    expect(billing.json).toMatchObject({ iban: 'CH9300762011623852957', account_holder: 'Verein' });
    expect((await api('GET', `/organisations/${organisation.uuid}`, customer)).status).toBe(403);

    const integrations = await api('GET', `/partner-integrations?organisation_uuid=${organisation.uuid}`, partner);
    expect(integrations.json).toEqual([
      expect.objectContaining({
        uuid: created.partner_integration_uuid,
        status: 'active',
        organisation_uuid: organisation.uuid,
        accounts: [{ uuid: accounts.main.uuid }],
        onboarding_process_uuid: created.uuid,
        partner: { name: 'Demo Partner CRM' },
      }),
    ]);
  });

  it('keeps the user’s password only as a slow salted hash', async () => {
    const [first, second] = [await newProcess(), await newProcess()];
    const password = 'correct horse battery';
    const done = await Promise.all([onboard(first.token), onboard(second.token)]);
    const users = await Promise.all(
      done.map((d) => table.getItem({ pk: `USER#${d.json.results.user.uuid}`, sk: 'USER' })),
    );
    for (const user of users) {
      expect(String(user?.password_hash)).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
      expect(JSON.stringify(user)).not.toContain(password);
    }
    // The same password, salted differently.
    expect(users[0]?.password_hash).not.toBe(users[1]?.password_hash);
  });

  it('merges the body over the initialisation data and refuses an incomplete result with 400', async () => {
    const created = await newProcess({ onboarding_configuration_uuid: DEMO.onboardingConfiguration });
    const incomplete = await onboard(created.token, { user: { password: 'correct horse battery' } });
    expect(incomplete.status).toBe(400);
    const missing = incomplete.json.error.message.map((d: { property: string }) => d.property);
    expect(missing).toEqual(expect.arrayContaining(['user.email', 'user.first_name', 'organisation']));
    const full = shapeA();
    const done = await onboard(created.token, {
      user: { ...full.user, password: 'correct horse battery' },
      organisation: full.organisation,
    });
    expect(done.status, done.text).toBe(201);
    expect((await api('GET', `/onboarding/processes/token/${created.token}`)).json.status).toBe('succeeded');
  });

  it('refuses a short password, keeps nothing of a refused request, and then succeeds', async () => {
    const created = await newProcess();
    expect((await onboard(created.token, { user: { password: 'short' } })).status).toBe(400);
    expect((await api('GET', `/onboarding/processes/token/${created.token}`)).json.status).toBe('pending');
    expect((await onboard(created.token)).status).toBe(201);
  });

  it('is 409 a second time, and 409 once expired (moving the clock)', async () => {
    const first = await newProcess();
    expect((await onboard(first.token)).status).toBe(201);
    const again = await onboard(first.token);
    expect(again.status).toBe(409);
    expect(again.json.error.message[0].code).toBe('error.onboarding.already_executed');

    const second = await newProcess();
    advanceClock(PROCESS_LIFETIME_SECONDS);
    const late = await onboard(second.token);
    expect(late.status).toBe(409);
    expect(late.json.error.message[0].code).toBe('error.onboarding.expired');
    expect((await api('POST', `/onboarding/processes/token/nope/onboard`, undefined, {})).status).toBe(404);
  });

  it('runs once when executed concurrently: one 201, the rest 409, one organisation', async () => {
    const created = await newProcess();
    const answers = await Promise.all(Array.from({ length: 6 }, () => onboard(created.token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const integrations = await api('GET', '/partner-integrations', partner);
    expect(
      integrations.json.filter((i: { onboarding_process_uuid: string }) => i.onboarding_process_uuid === created.uuid),
    ).toHaveLength(1);
  });

  it('gives one user per e-mail address when two processes with it run at once', async () => {
    const person = shapeA();
    const processes = await Promise.all([newProcess(person), newProcess({ ...shapeA(), user: person.user })]);
    const answers = await Promise.all(processes.map((p) => onboard(p.token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const loser = answers.find((a) => a.status === 409);
    expect(loser?.json.error.message[0].code).toBe('error.onboarding.user_exists');
  });

  it('refuses a second user with the same e-mail address (409) and leaves that process pending', async () => {
    const first = shapeA();
    expect((await onboard((await newProcess(first)).token)).status).toBe(201);
    const second = await newProcess({ ...shapeA(), user: first.user });
    const clash = await onboard(second.token);
    expect(clash.status).toBe(409);
    expect(clash.json.error.message[0]).toMatchObject({ code: 'error.onboarding.user_exists', property: 'user.email' });
    expect((await api('GET', `/onboarding/processes/token/${second.token}`)).json.status).toBe('pending');
  });

  it('creates the webhooks of the initialisation data on the new organisation', async () => {
    const { user, organisation } = shapeA();
    const created = await newProcess({
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      initialisation_data: {
        user,
        organisation,
        event_subscriptions: [
          {
            event_name: 'svc.organisations.organisation.approved',
            endpoint: 'https://hooks.example.org/a',
            hmac_key: 'k-approved',
          },
          { event_name: 'svc.organisations.organisation.declined', endpoint: 'https://hooks.example.org/d' },
        ],
      },
    });
    const done = await onboard(created.token);
    const org = done.json.results.organisation.uuid;
    const subscriptions = await api('GET', `/event-subscriptions?organisation_uuid=${org}`, partner);
    expect(subscriptions.status).toBe(200);
    expect(subscriptions.json.map((s: { event_name: string }) => s.event_name).sort()).toEqual([
      'svc.organisations.organisation.approved',
      'svc.organisations.organisation.declined',
    ]);
    const approved = subscriptions.json.find((s: { event_name: string }) => s.event_name.endsWith('approved'));
    const endpoint = await api('GET', `/webhooks/${approved.action_configuration_uuid}`, partner);
    expect(endpoint.json).toMatchObject({ endpoint: 'https://hooks.example.org/a', hmac_key: 'k-approved' });
  });
});

describe('the e-mail existence check', () => {
  it('is 204 for a user, 404 otherwise, 403 for a refused captcha, 400 without one or for a bad address', async () => {
    const body = shapeA();
    await onboard((await newProcess(body)).token);
    const check = (email: string, query: string) =>
      api('GET', `/onboarding/users/${encodeURIComponent(email)}/existence${query}`);
    expect((await check(body.user.email, '?recaptcha_token=test-captcha-ok')).status).toBe(204);
    expect((await check(body.user.email.toUpperCase(), '?recaptcha_token=test-captcha-ok')).status).toBe(204);
    expect((await check('nobody@example.ch', '?recaptcha_token=test-captcha-ok')).status).toBe(404);
    expect((await check(body.user.email, '?recaptcha_token=wrong')).status).toBe(403);
    const missing = await check(body.user.email, '');
    expect(missing.status).toBe(400);
    expect(missing.json.error.message[0]).toMatchObject({
      code: 'error.validation.not_null',
      property: 'recaptcha_token',
    });
    const bad = await check('not-an-address', '?recaptcha_token=test-captcha-ok');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message[0].code).toBe('error.validation.not_valid');
  });

  it('on a stage with the captcha off, answers for any token the request carries, still not without one', async () => {
    const body = shapeA();
    await onboard((await newProcess(body)).token);
    const check = (email: string, query: string) =>
      api('GET', `/onboarding/users/${encodeURIComponent(email)}/existence${query}`);
    process.env.SVC_CAPTCHA_VERIFIER = 'off';
    try {
      expect((await check(body.user.email, '?recaptcha_token=captcha-off')).status).toBe(204);
      expect((await check('nobody@example.ch', '?recaptcha_token=anything')).status).toBe(404);
      expect((await check(body.user.email, '')).status).toBe(400);
    } finally {
      process.env.SVC_CAPTCHA_VERIFIER = 'test';
    }
  });
});

describe('executing a partner connection', () => {
  it('connects an organisation of a signed-in user; wrong credentials or a foreign organisation are 403', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const organisation = first.json.results.organisation.uuid;
    // The partner disconnects, then connects again through a new process.
    const [integration] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner)).json;
    expect((await api('POST', `/partner-integrations/${integration.uuid}/disable`, partner)).status).toBe(200);
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(403);

    const process = await newProcess();
    const connect = (body: unknown) =>
      api('POST', `/onboarding/processes/token/${process.token}/connect`, undefined, body);
    const credentials = {
      email: person.user.email,
      password: 'correct horse battery',
      organisation_uuid: organisation,
    };
    expect((await connect({ ...credentials, password: 'wrong password!' })).status).toBe(403);
    expect((await connect({ ...credentials, email: 'nobody@example.ch' })).status).toBe(403);
    expect((await connect({ ...credentials, organisation_uuid: DEMO.org })).status).toBe(403);
    const done = await connect(credentials);
    expect(done.status, done.text).toBe(201);
    expect(done.json.results).toMatchObject({
      organisation: { uuid: organisation },
      user: { uuid: first.json.results.user.uuid },
    });
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(200);
    expect((await connect(credentials)).status).toBe(409);
  });

  it('connects an organisation once when two processes connect it at once', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const organisation = first.json.results.organisation.uuid;
    const [integration] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner)).json;
    await api('POST', `/partner-integrations/${integration.uuid}/disable`, partner);
    const processes = await Promise.all([newProcess(), newProcess(), newProcess()]);
    const answers = await Promise.all(
      processes.map((p) =>
        api('POST', `/onboarding/processes/token/${p.token}/connect`, undefined, {
          email: person.user.email,
          password: 'correct horse battery',
          organisation_uuid: organisation,
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    const active = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner)).json.filter(
      (i: { status: string }) => i.status === 'active',
    );
    expect(active).toHaveLength(1);
  });

  it('refuses to connect an organisation that is connected already (409)', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const process = await newProcess();
    const again = await api('POST', `/onboarding/processes/token/${process.token}/connect`, undefined, {
      email: person.user.email,
      password: 'correct horse battery',
      organisation_uuid: first.json.results.organisation.uuid,
    });
    expect(again.status).toBe(409);
    expect(again.json.error.message[0].code).toBe('error.onboarding.already_connected');
  });
});

describe('partner integrations', () => {
  it('lists with filters and takes access away on disable (403 from then on)', async () => {
    const done = await onboard((await newProcess()).token);
    const organisation = done.json.results.organisation.uuid;
    const account = done.json.results.accounts.main.uuid;
    const list = (query: string, token = partner) => api('GET', `/partner-integrations${query}`, token);
    expect((await list(`?organisation_uuid=${organisation}`)).json).toHaveLength(1);
    expect((await list(`?organisation_uuid=${organisation}&account_uuid=${account}`)).json).toHaveLength(1);
    expect((await list(`?organisation_uuid=${organisation}&account_uuid=${DEMO.account}`)).status).toBe(403);
    expect(
      (await list(`?organisation_uuid=${organisation}&configuration_uuid=${DEMO.onboardingConfiguration}`)).json,
    ).toHaveLength(1);
    expect((await list(`?organisation_uuid=${organisation}&configuration_uuid=${DEMO.org}`)).json).toHaveLength(0);
    expect((await list(`?organisation_uuid=${organisation}`, customer)).status).toBe(403);
    expect((await list('', customer)).json).toEqual([]);

    const [integration] = (await list(`?organisation_uuid=${organisation}`)).json;
    expect((await api('POST', `/partner-integrations/${integration.uuid}/disable`, otherClient)).status).toBe(403);
    const disabled = await api('POST', `/partner-integrations/${integration.uuid}/disable`, partner);
    expect(disabled.status).toBe(200);
    expect(disabled.json).toMatchObject({ status: 'disabled', disabled_at: now() });
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(403);
    expect((await api('GET', `/accounts/${account}`, partner)).status).toBe(403);
    expect((await list(`?organisation_uuid=${organisation}`)).status).toBe(403);
    // The partner still sees its own (disabled) integration without the filter.
    const mine = (await list('')).json.find((i: { uuid: string }) => i.uuid === integration.uuid);
    expect(mine.status).toBe('disabled');
    const again = await api('POST', `/partner-integrations/${integration.uuid}/disable`, partner);
    expect(again.status).toBe(200);
    expect(again.json.status).toBe('disabled');
    expect(
      (await api('POST', '/partner-integrations/00000000-0000-4000-8000-0000000000ac/disable', partner)).status,
    ).toBe(404);
  });
});

describe('organisation approval', () => {
  it('lets operators approve and decline (409 on a repeat, 403 for others)', async () => {
    const done = await onboard((await newProcess()).token);
    const organisation = done.json.results.organisation.uuid;
    const decide = (what: string, token = operator) =>
      api('POST', `/operator/organisations/${organisation}/${what}`, token);
    expect((await decide('approve', partner)).status).toBe(403);
    expect((await decide('approve', customer)).status).toBe(403);
    const approved = await decide('approve');
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ uuid: organisation, approval_status: 'approved' });
    expect((await decide('approve')).status).toBe(409);
    const declined = await decide('decline');
    expect(declined.json.approval_status).toBe('declined');
    expect((await decide('decline')).status).toBe(409);
    expect(
      (await api('POST', '/operator/organisations/00000000-0000-4000-8000-0000000000ad/approve', operator)).status,
    ).toBe(404);
  });

  it('lets exactly one of two racing operators decide', async () => {
    const done = await onboard((await newProcess()).token);
    const organisation = done.json.results.organisation.uuid;
    const answers = await Promise.all(
      ['approve', 'approve', 'approve', 'approve'].map((what) =>
        api('POST', `/operator/organisations/${organisation}/${what}`, operator),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
  });
});

describe('events', () => {
  it('announces the process to the partner organisation and the organisation’s approval steps', async () => {
    const created = await newProcess();
    const done = await onboard(created.token);
    const organisation = done.json.results.organisation.uuid;
    await api('POST', `/operator/organisations/${organisation}/approve`, operator);
    const events = await streamEvents();
    const ofProcess = events.filter((e) => e.object_uuid === created.uuid);
    expect(ofProcess.map((e) => [e.name, e.organisation_uuid, e.sequence])).toEqual([
      ['svc.onboarding.onboarding_process.created', DEMO.partnerOrg, 1],
      ['svc.onboarding.onboarding_process.succeeded', DEMO.partnerOrg, 2],
    ]);
    const ofOrganisation = events.filter((e) => e.object_uuid === organisation);
    expect(ofOrganisation.map((e) => [e.name, e.organisation_uuid, e.sequence])).toEqual([
      ['svc.organisations.organisation.approval_requested', organisation, 1],
      ['svc.organisations.organisation.approved', organisation, 2],
    ]);
  });
});

describe('webhooks of onboarding', () => {
  it('delivers the partner its process events and the new organisation its approval events, with data', async () => {
    const hook = await api('POST', '/webhooks', partner, {
      organisation_uuid: DEMO.partnerOrg,
      endpoint: `https://127.0.0.1:${receiver.port}/partner`,
    });
    expect(hook.status, hook.text).toBe(201);
    for (const event_name of [
      'svc.onboarding.onboarding_process.created',
      'svc.onboarding.onboarding_process.succeeded',
    ]) {
      const subscription = await api('POST', '/event-subscriptions', partner, {
        organisation_uuid: DEMO.partnerOrg,
        action_configuration_uuid: hook.json.uuid,
        action_type: 'webhook',
        event_name,
      });
      expect(subscription.status, subscription.text).toBe(201);
    }
    const { user, organisation } = shapeA();
    const created = await newProcess({
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      initialisation_data: {
        user,
        organisation,
        event_subscriptions: [
          {
            event_name: 'svc.organisations.organisation.approval_requested',
            endpoint: `https://127.0.0.1:${receiver.port}/organisation`,
          },
        ],
      },
    });
    const done = await onboard(created.token);
    expect((await api('POST', '/_local/settle')).status).toBe(200);
    // The earlier tests' events reach this new endpoint too (its subscriptions match them), over
    // 50 in this frozen second: the endpoint's pace sends the newest, these, in the next one.
    advanceClock(1);
    expect((await api('POST', '/_local/settle')).status).toBe(200);

    const bodies = (path: string) =>
      receiver.requests.filter((r) => r.url === path).map((r) => JSON.parse(r.body).event);
    // Deliveries run concurrently: receivers order one object's events by `sequence`.
    const processEvents = bodies('/partner')
      .filter((e) => e.object_uuid === created.uuid)
      .sort((a, b) => a.sequence - b.sequence);
    expect(processEvents.map((e) => [e.name, e.data.status])).toEqual([
      ['svc.onboarding.onboarding_process.created', 'pending'],
      ['svc.onboarding.onboarding_process.succeeded', 'succeeded'],
    ]);
    expect(processEvents[1].data.results).toEqual(done.json.results);
    const [requested] = bodies('/organisation');
    expect(requested).toMatchObject({
      name: 'svc.organisations.organisation.approval_requested',
      object: 'organisation',
      object_uuid: done.json.results.organisation.uuid,
      data: { approval_status: 'approval_pending', name: organisation.name },
    });
  });
});

describe('a technical failure during execution', () => {
  it('marks the process failed with its event; the partner starts a new one', async () => {
    const created = await newProcess();
    const spy = vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    try {
      expect((await onboard(created.token)).status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    const read = await api('GET', `/onboarding/processes/${created.uuid}`, partner);
    expect(read.json).toMatchObject({ status: 'failed', label: 'failed' });
    expect((await onboard(created.token)).status).toBe(409);
    const events = (await streamEvents()).filter((e) => e.object_uuid === created.uuid).map((e) => e.name);
    expect(events).toEqual(['svc.onboarding.onboarding_process.created', 'svc.onboarding.onboarding_process.failed']);
  });
});

describe('two partners on one organisation', () => {
  const SECOND = { id: 'second-partner', secret: 'second-partner-secret' };
  const SECOND_CONFIGURATION = '5e1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f61';

  beforeAll(async () => {
    const demo = (await findClient(DEMO.partner.id))?.partner;
    if (!demo) throw new Error('no demo partner');
    await upsertClient({
      client_id: SECOND.id,
      client_secret: SECOND.secret,
      partner: {
        ...demo,
        name: 'Second Partner',
        onboarding_configuration_uuid: SECOND_CONFIGURATION,
        allow_self_disconnect: true,
        organisation_uuid: undefined,
      },
    });
  });

  it('each sees and disconnects only its own integration; the organisation may disconnect the one that allows it', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const organisation = first.json.results.organisation.uuid;
    const second = await tokenFor(SECOND);
    const process = await api('POST', '/onboarding/processes', second, {
      onboarding_configuration_uuid: SECOND_CONFIGURATION,
    });
    expect(process.status, process.text).toBe(201);
    const connected = await api('POST', `/onboarding/processes/token/${process.json.token}/connect`, undefined, {
      email: person.user.email,
      password: 'correct horse battery',
      organisation_uuid: organisation,
    });
    expect(connected.status, connected.text).toBe(201);

    const seenBy = async (token: string) =>
      (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, token)).json.map(
        (i: { partner: { name: string } }) => i.partner.name,
      );
    expect(await seenBy(partner)).toEqual(['Demo Partner CRM']);
    expect(await seenBy(second)).toEqual(['Second Partner']);
    const [demoIntegration] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner))
      .json;
    const [secondIntegration] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, second))
      .json;
    expect((await api('POST', `/partner-integrations/${demoIntegration.uuid}/disable`, second)).status).toBe(403);
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(200);

    // The organisation's own client sees both, may disconnect the partner that allows it, not the other.
    await addGrant(DEMO.client.id, { organisation_uuid: organisation });
    expect((await seenBy(customer)).sort()).toEqual(['Demo Partner CRM', 'Second Partner']);
    const refused = await api('POST', `/partner-integrations/${demoIntegration.uuid}/disable`, customer);
    expect(refused.status).toBe(403);
    expect(refused.json.error.message[0].message).toContain('https://partner.example.org/support');
    expect((await api('POST', `/partner-integrations/${secondIntegration.uuid}/disable`, customer)).status).toBe(200);
    expect((await api('GET', `/organisations/${organisation}`, second)).status).toBe(403);
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(200);
  });
});

describe('guessing', () => {
  it('spends the token after five refused credentials', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const process = await newProcess();
    const connect = (password: string) =>
      api('POST', `/onboarding/processes/token/${process.token}/connect`, undefined, {
        email: person.user.email,
        password,
        organisation_uuid: first.json.results.organisation.uuid,
      });
    for (let i = 0; i < 5; i++) expect((await connect(`wrong password ${i}`)).status).toBe(403);
    const read = await api('GET', `/onboarding/processes/${process.uuid}`, partner);
    expect(read.json.status).toBe('failed');
    expect((await connect('correct horse battery')).status).toBe(409);
    const events = (await streamEvents()).filter((e) => e.object_uuid === process.uuid).map((e) => e.name);
    expect(events).toContain('svc.onboarding.onboarding_process.failed');
  });

  it('counts onboard answers that tell an address is known', async () => {
    const person = shapeA();
    await onboard((await newProcess(person)).token);
    const process = await newProcess({ ...shapeA(), user: person.user });
    for (let i = 0; i < 5; i++) expect((await onboard(process.token)).status).toBe(409);
    expect((await api('GET', `/onboarding/processes/${process.uuid}`, partner)).json.status).toBe('failed');
  });
});

describe('grants held before a connection', () => {
  it('stay when the integration is disabled', async () => {
    const person = shapeA();
    const first = await onboard((await newProcess(person)).token);
    const organisation = first.json.results.organisation.uuid;
    const [integration] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner)).json;
    await api('POST', `/partner-integrations/${integration.uuid}/disable`, partner);
    // An operator gave the partner access by other means meanwhile.
    await addGrant(DEMO.partner.id, { organisation_uuid: organisation });
    const process = await newProcess();
    const connected = await api('POST', `/onboarding/processes/token/${process.token}/connect`, undefined, {
      email: person.user.email,
      password: 'correct horse battery',
      organisation_uuid: organisation,
    });
    expect(connected.status).toBe(201);
    const [active] = (await api('GET', `/partner-integrations?organisation_uuid=${organisation}`, partner)).json.filter(
      (i: { status: string }) => i.status === 'active',
    );
    expect((await api('POST', `/partner-integrations/${active.uuid}/disable`, partner)).status).toBe(200);
    expect((await api('GET', `/organisations/${organisation}`, partner)).status).toBe(200);
  });
});

describe('more rules', () => {
  it('refuses an account filter on an account without a grant (403)', async () => {
    expect((await api('GET', `/partner-integrations?account_uuid=${DEMO.account}`, partner)).status).toBe(403);
    expect((await api('GET', `/partner-integrations?account_uuid=${DEMO.account}`, customer)).status).toBe(200);
  });

  it('refuses a partial billing address at creation: the page could not complete it', async () => {
    const response = await api('POST', '/onboarding/processes', partner, {
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      organisation: { billing_address: { city: 'Bern' } },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.message.map((d: { property: string }) => d.property)).toContain(
      'organisation.billing_address.address_line1',
    );
  });

  it('leaves the process pending after a transient store error', async () => {
    const created = await newProcess();
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const spy = vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(throttled);
    try {
      expect((await onboard(created.token)).status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect((await api('GET', `/onboarding/processes/${created.uuid}`, partner)).json.status).toBe('pending');
    expect((await onboard(created.token)).status).toBe(201);
  });
});
