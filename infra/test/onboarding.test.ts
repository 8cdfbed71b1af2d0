import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTCHA_SECRET_OUTPUT, DOMAINS, ROUTE_TABLE, WORKERS } from '@svc/api';
import { INDEXES } from '@svc/table';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { captchaSiteKeyContext, STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import { ServiceStack } from '../stacks/service-stack';
import { appProps, SKIP_BUNDLING, TEST_CAPTCHA_SITE_KEYS } from './support/app-props';
import { bundledSources } from './support/bundle-files';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import {
  actionsOf,
  functionsByService,
  integrationTargets,
  logicalIdOf,
  logicalIdStartingWith,
  resourcesGranting,
  rolesAllowedOn,
  routes,
  type Statement,
  statementsOfRole,
} from './support/template-model';

useSynthesizedApp('as-deployed');

/** The onboarding domain's routes, as the interface names them: the API, then the hosted page. */
const ONBOARDING_ROUTES = [
  'POST /onboarding/processes',
  'GET /onboarding/processes/{process_uuid}',
  'GET /onboarding/processes/token/{token}',
  'POST /onboarding/processes/token/{token}/onboard',
  'POST /onboarding/processes/token/{token}/connect',
  'GET /onboarding/users/{email}/existence',
  'GET /partner-integrations',
  'POST /partner-integrations/{partner_integration_uuid}/disable',
];
const CONNECT_ROUTES = [
  'GET /connect',
  'POST /connect/email',
  'POST /connect/onboard',
  'POST /connect/sign-in',
  'POST /connect/connect',
  'GET /connect/assets/{file}',
];
/** Without a token: the page, the operations the process token addresses, the captcha-guarded check. */
const PUBLIC_ROUTES = [
  ...CONNECT_ROUTES,
  'GET /onboarding/processes/token/{token}',
  'POST /onboarding/processes/token/{token}/onboard',
  'POST /onboarding/processes/token/{token}/connect',
  'GET /onboarding/users/{email}/existence',
];

/** What the onboarding code sends to the table (besides Query on gsi1 and gsi2). */
const ONBOARDING_TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
];

const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const indexArnOf = (tableId: string, index: string) => ({
  'Fn::Join': ['', [arnOf(tableId), `/index/${index}`]],
});
const secretContext = { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } };
/** The execute-api address of the stage's HTTP API, followed by `path`. */
const apiAddress = (apiId: string, path: string) => ({
  'Fn::Join': [
    '',
    ['https://', { Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, path],
  ],
});

/**
 * Where a stage's links to the hosted page point: its API's own address, or, behind an edge
 * (staging, prod), the CloudFront distribution's (infra/constructs/edge.ts).
 */
function connectAddress(stage: StageName, template: Template, apiId: string) {
  if (!STAGES[stage].edge) return apiAddress(apiId, '/connect');
  const [distributionId] = Object.keys(template.findResources('AWS::CloudFront::Distribution'));
  return { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/connect']] };
}

function functionOf(template: Template, service: string) {
  const fn = functionsByService(template).get(service);
  if (!fn) throw new Error(`No ${service} function`);
  return fn;
}

function onboardingOf(stage: StageName) {
  const template = templateOf(stage);
  const fn = functionOf(template, 'onboarding');
  return {
    template,
    fn,
    variables: fn.properties.Environment.Variables,
    statements: statementsOfRole(template, fn.roleId),
    tableId: logicalIdOf(template, 'AWS::DynamoDB::Table'),
    keyId: logicalIdStartingWith(template, 'AWS::KMS::Key', 'EventsWebhookSecretsKey'),
    apiId: logicalIdOf(template, 'AWS::ApiGatewayV2::Api'),
    hashKeyId: logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'HashKey'),
    searchSecretId: logicalIdOf(template, 'AWS::SecretsManager::SecretTargetAttachment'),
  };
}

const captchaSecretIdOf = (template: Template) =>
  logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'CaptchaSecret');

const kmsStatements = (statements: readonly Statement[]) =>
  statements.filter((statement) => statement.Action.some((action) => action.startsWith('kms:')));

describe('the onboarding domain in the route table', () => {
  it('serves the partner onboarding API and the hosted page, and nothing else', () => {
    const keys = ROUTE_TABLE.filter((entry) => entry.domain === 'onboarding').map((entry) => entry.key);
    expect(keys.sort()).toEqual([...ONBOARDING_ROUTES, ...CONNECT_ROUTES].sort());
  });

  it('needs a token everywhere but on /connect*, the token-addressed operations and the existence check', () => {
    const own = ROUTE_TABLE.filter((entry) => entry.domain === 'onboarding');
    const open = own.filter((entry) => entry.route.auth === 'none').map((entry) => entry.key);
    expect(open.sort()).toEqual([...PUBLIC_ROUTES].sort());
    const closed = own.filter((entry) => entry.route.auth === 'token').map((entry) => entry.key);
    expect(closed.sort()).toEqual(ONBOARDING_ROUTES.filter((key) => !PUBLIC_ROUTES.includes(key)).sort());
  });

  it('is a DOMAINS entry of 1024 MB bundled from the onboarding handlers', () => {
    expect(DOMAINS.onboarding).toEqual({ entry: 'apps/api/src/onboarding-lambda.ts', memoryMb: 1024 });
  });
});

describe.each(STAGE_NAMES)('the %s onboarding function', (stage) => {
  it('is a Node 22 arm64 Lambda of its own, sized as DOMAINS says', () => {
    const { fn } = onboardingOf(stage);
    expect(fn.properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: DOMAINS.onboarding.memoryMb,
    });
    expect(fn.properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe('onboarding');
  });

  it('serves every onboarding and connect route of the HTTP API', () => {
    const { template, fn } = onboardingOf(stage);
    const targets = integrationTargets(template);
    const served = new Map(routes(template).map((route) => [route.routeKey, targets.get(route.integrationId)]));
    for (const key of [...ONBOARDING_ROUTES, ...CONNECT_ROUTES]) {
      expect(served.has(key), `${key} is a route of the API`).toBe(true);
      expect(served.get(key), key).toBe(fn.logicalId);
    }
    const servedByOnboarding = [...served].filter(([, target]) => target === fn.logicalId).map(([key]) => key);
    expect(servedByOnboarding.sort()).toEqual([...ONBOARDING_ROUTES, ...CONNECT_ROUTES].sort());
  });

  it('serves the page assets through GET /connect/assets/{file}, without a gateway authorizer', () => {
    const { template, fn } = onboardingOf(stage);
    const targets = integrationTargets(template);
    const assets = routes(template).filter((route) => route.routeKey === 'GET /connect/assets/{file}');
    expect(assets).toHaveLength(1);
    expect(targets.get(assets[0]?.integrationId ?? '')).toBe(fn.logicalId);
    expect(assets[0]?.authorizationType ?? 'NONE').toBe('NONE');
  });

  it('may get, batch-get, put, update, delete and condition-check items, and query gsi1 and gsi2 only: no Scan', () => {
    const { statements, tableId } = onboardingOf(stage);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(new Set([...ONBOARDING_TABLE_ACTIONS, 'dynamodb:Query']));
    for (const action of ONBOARDING_TABLE_ACTIONS) {
      // UpdateItem twice: its own partitions, and a partner client's grants (attribute-limited).
      expect([...new Set(resourcesGranting(statements, action).map((r) => JSON.stringify(r)))], action).toEqual([
        JSON.stringify(arnOf(tableId)),
      ]);
    }
    expect(resourcesGranting(statements, 'dynamodb:Query')).toEqual([
      indexArnOf(tableId, INDEXES.gsi1.name),
      indexArnOf(tableId, INDEXES.gsi2.name),
    ]);
    for (const action of ['dynamodb:Scan', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteTable', 'dynamodb:*']) {
      expect(resourcesGranting(statements, action), action).toEqual([]);
    }
  });

  it('seals and opens webhook secrets with the webhook secrets key, for that encryption context only', () => {
    const { statements, variables, keyId } = onboardingOf(stage);
    expect(variables.SVC_WEBHOOK_KMS_KEY_ID).toEqual(arnOf(keyId));
    const kms = kmsStatements(statements);
    expect(actionsOf(kms, 'kms:')).toEqual(new Set(['kms:Encrypt', 'kms:Decrypt']));
    expect(kms).toEqual([
      expect.objectContaining({ Effect: 'Allow', Resource: arnOf(keyId), Condition: secretContext }),
    ]);
  });

  it('holds the same key grant as the webhooks function, which seals the same secrets', () => {
    const { template, statements } = onboardingOf(stage);
    const webhooks = functionOf(template, 'webhooks');
    expect(kmsStatements(statements)).toEqual(kmsStatements(statementsOfRole(template, webhooks.roleId)));
  });

  it('verifies captchas as the stage config says: reCAPTCHA with the site key and secret ARN, or off', () => {
    const { variables, template } = onboardingOf(stage);
    expect(variables).not.toHaveProperty('SVC_CAPTCHA_SECRET');
    if (STAGES[stage].captcha.verifier === 'off') {
      expect(variables.SVC_CAPTCHA_VERIFIER).toBe('off');
      expect(variables).not.toHaveProperty('SVC_CAPTCHA_SECRET_ARN');
      expect(variables).not.toHaveProperty('SVC_CAPTCHA_SITE_KEY');
      return;
    }
    expect(variables).toMatchObject({
      SVC_CAPTCHA_VERIFIER: 'recaptcha',
      SVC_CAPTCHA_SECRET_ARN: { Ref: captchaSecretIdOf(template) },
      SVC_CAPTCHA_SITE_KEY: TEST_CAPTCHA_SITE_KEYS[captchaSiteKeyContext(stage)],
    });
  });

  it('may read the captcha secret (reCAPTCHA stages), the hash key and the search engine’s secret, and no other secret', () => {
    const { template, statements, hashKeyId, searchSecretId } = onboardingOf(stage);
    // The search engine's: the organisations it creates are upserted into search at once.
    const allowed = [
      ...(STAGES[stage].captcha.verifier === 'recaptcha' ? [{ Ref: captchaSecretIdOf(template) }] : []),
      { Ref: hashKeyId },
      { Ref: searchSecretId },
    ];
    expect(resourcesGranting(statements, 'secretsmanager:GetSecretValue')).toEqual(expect.arrayContaining(allowed));
    expect(resourcesGranting(statements, 'secretsmanager:GetSecretValue')).toHaveLength(allowed.length);
    const secretStatements = statements.filter((s) => s.Action.some((action) => action.startsWith('secretsmanager:')));
    for (const statement of secretStatements) {
      for (const resource of [statement.Resource].flat()) expect(allowed).toContainEqual(resource);
    }
    expect(actionsOf(statements, 'secretsmanager:').has('secretsmanager:PutSecretValue')).toBe(false);
  });

  it('points SVC_CONNECT_URL at the API’s own /connect, or its edge’s (no custom domain in the stage config)', () => {
    const { template, variables, apiId } = onboardingOf(stage);
    expect(STAGES[stage].domain).toBeUndefined();
    expect(variables.SVC_CONNECT_URL).toEqual(connectAddress(stage, template, apiId));
  });
});

const RECAPTCHA_STAGES = STAGE_NAMES.filter((name) => STAGES[name].captcha.verifier === 'recaptcha');

describe.each(RECAPTCHA_STAGES)('the %s captcha secret', (stage) => {
  it('is created by the stack for the operator to fill in, without rotation, and named in an output', () => {
    const { template } = onboardingOf(stage);
    const captchaSecretId = captchaSecretIdOf(template);
    const secret = template.findResources('AWS::SecretsManager::Secret')[captchaSecretId];
    expect(secret?.Properties?.Description).toMatch(/reCAPTCHA secret key.*operator/);
    template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
    expect(template.findOutputs(CAPTCHA_SECRET_OUTPUT)[CAPTCHA_SECRET_OUTPUT]?.Value).toEqual({ Ref: captchaSecretId });
  });

  it('is readable by the onboarding function only, and writable by no function', () => {
    const { template, fn } = onboardingOf(stage);
    const captchaSecretId = captchaSecretIdOf(template);
    expect(rolesAllowedOn(template, captchaSecretId, ['secretsmanager:GetSecretValue', 'secretsmanager:*'])).toEqual(
      new Set([fn.roleId]),
    );
    expect(
      rolesAllowedOn(template, captchaSecretId, [
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecret',
        'secretsmanager:*',
      ]).size,
    ).toBe(0);
    for (const [service, other] of functionsByService(template)) {
      if (service === 'onboarding') continue;
      expect(
        Object.keys(other.properties.Environment.Variables).filter((name) => name.startsWith('SVC_CAPTCHA')),
        service,
      ).toEqual([]);
    }
  });

  it('acknowledges the rotation rule (AwsSolutions-SMG4) with the reason: a third-party key', () => {
    const stack = synthesized().stacks.get(stage);
    const acknowledged = (stack?.captchaSecret?.node.metadata ?? [])
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(z.record(z.string(), z.string()).parse(entry.data)));
    // The key carries CDK's own prefix (`Annotation::`); the rule id ends it.
    expect(acknowledged).toEqual([
      [expect.stringMatching(/AwsSolutions-SMG4$/), expect.stringMatching(/third-party/i)],
    ]);
  });
});

describe.each(STAGE_NAMES)('the %s stream publisher', (stage) => {
  it('gets the same SVC_CONNECT_URL as onboarding, for the onboarding_url of process events', () => {
    const { template, variables, apiId } = onboardingOf(stage);
    const publisher = functionOf(template, 'stream-publisher');
    expect(publisher.properties.Environment.Variables.SVC_CONNECT_URL).toEqual(connectAddress(stage, template, apiId));
    expect(publisher.properties.Environment.Variables.SVC_CONNECT_URL).toEqual(variables.SVC_CONNECT_URL);
  });

  it('is bundled from the API package’s entry, which registers onboarding’s event shapes', () => {
    expect(WORKERS.streamPublisher.entry).toBe('apps/api/src/stream-publisher-lambda.ts');
    const { outdir } = synthesized();
    const publisher = functionOf(templateOf(stage), 'stream-publisher');
    const code = z
      .object({ S3Key: z.string() })
      .parse(
        z
          .object({ Properties: z.object({ Code: z.unknown() }) })
          .parse(templateOf(stage).findResources('AWS::Lambda::Function')[publisher.logicalId]).Properties.Code,
      );
    const assetDir = join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    expect(existsSync(join(assetDir, 'index.mjs.map')), assetDir).toBe(true);
    const sources = bundledSources(assetDir);
    expect(sources.some((source) => source.endsWith(WORKERS.streamPublisher.entry))).toBe(true);
    expect(sources.some((source) => source.endsWith('services/onboarding/src/event-data.ts'))).toBe(true);
  });
});

describe('a stage with a custom domain', () => {
  it('gives onboarding and the stream publisher https://<domain>/connect', () => {
    const stack = new ServiceStack(new App(appProps(SKIP_BUNDLING)), 'connect-domain', {
      stage: {
        ...STAGES.staging,
        domain: {
          name: 'api.staging.example.org',
          // Staging serves its domain from CloudFront (its edge), which takes us-east-1 certificates.
          certificateArn: 'arn:aws:acm:us-east-1:000000000000:certificate/11111111-2222-3333-4444-555555555555',
        },
      },
    });
    const template = Template.fromStack(stack);
    for (const service of ['onboarding', 'stream-publisher']) {
      expect(functionOf(template, service).properties.Environment.Variables.SVC_CONNECT_URL, service).toBe(
        'https://api.staging.example.org/connect',
      );
    }
  }, 60_000);
});

describe('a stage whose captcha is off', () => {
  it('has no captcha secret and no output for one', () => {
    const off = STAGE_NAMES.filter((name) => STAGES[name].captcha.verifier === 'off');
    expect(off).toEqual(['dev']);
    for (const name of off) {
      const template = templateOf(name);
      expect(
        Object.keys(template.findResources('AWS::SecretsManager::Secret')).filter((id) =>
          id.startsWith('CaptchaSecret'),
        ),
      ).toEqual([]);
      expect(template.findOutputs(CAPTCHA_SECRET_OUTPUT)).toEqual({});
    }
  });
});

describe('the reCAPTCHA site key', () => {
  let stacks = 0;
  const stageWith = (captcha: (typeof STAGES)['staging']['captcha'], context: Record<string, unknown>) =>
    new ServiceStack(new App(appProps({ ...SKIP_BUNDLING, ...context })), `captcha-${++stacks}`, {
      stage: { ...STAGES.staging, captcha },
    });

  it('is required to synthesize a reCAPTCHA stage: with none in the config or the context, synth fails and says how to give it', () => {
    for (const missing of [undefined, '', '  ']) {
      expect(() => stageWith({ verifier: 'recaptcha' }, { [captchaSiteKeyContext('staging')]: missing })).toThrow(
        /Stage staging verifies captchas with reCAPTCHA but has no site key: give it with -c captchaSiteKey\.staging=<site key>/,
      );
    }
  });

  it('comes from the stage config before the context', () => {
    const stack = stageWith({ verifier: 'recaptcha', siteKey: 'from-config' }, {});
    const onboarding = functionOf(Template.fromStack(stack), 'onboarding');
    expect(onboarding.properties.Environment.Variables.SVC_CAPTCHA_SITE_KEY).toBe('from-config');
  }, 60_000);

  it('is not committed for staging or prod: the operator gives it at synth', () => {
    expect(RECAPTCHA_STAGES).toEqual(['staging', 'prod']);
    for (const name of RECAPTCHA_STAGES) expect(STAGES[name].captcha, name).toEqual({ verifier: 'recaptcha' });
  });
});
