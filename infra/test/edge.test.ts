import { ROUTE_TABLE, stackName } from '@svc/api';
import { App, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { STAGES, type StageName } from '../config/stages';
import { createServiceApp } from '../stacks/service-app';
import { ServiceStack } from '../stacks/service-stack';
import { appProps, SKIP_BUNDLING } from './support/app-props';

/**
 * The edge of issue 44 (point 4): on staging and prod a CloudFront distribution with an AWS WAF
 * web ACL sits in front of the HTTP API; dev has none. Every stage of one app, built once.
 */
let stacks: ReadonlyMap<string, Stack>;
const templates = new Map<string, Template>();

beforeAll(() => {
  const { app } = createServiceApp(appProps(SKIP_BUNDLING));
  app.synth();
  stacks = new Map(
    app.node.children.filter((child): child is Stack => 'templateOptions' in child).map((s) => [s.stackName, s]),
  );
});

function template(name: string): Template {
  let found = templates.get(name);
  if (!found) {
    const stack = stacks.get(name);
    if (!stack) throw new Error(`No stack ${name}: have ${[...stacks.keys()].join(', ')}`);
    found = Template.fromStack(stack);
    templates.set(name, found);
  }
  return found;
}

const firewallStackOf = (stage: StageName) => `${stackName(stage)}-edge-firewall`;

const ruleSchema = z.object({
  Name: z.string(),
  Priority: z.number(),
  Statement: z.record(z.string(), z.unknown()),
  Action: z.record(z.string(), z.unknown()).optional(),
  OverrideAction: z.record(z.string(), z.unknown()).optional(),
});
const webAclSchema = z.object({
  Scope: z.string(),
  DefaultAction: z.record(z.string(), z.unknown()),
  Rules: z.array(ruleSchema),
});

function webAclOf(stage: StageName): z.infer<typeof webAclSchema> {
  const acls = Object.values(template(firewallStackOf(stage)).findResources('AWS::WAFv2::WebACL'));
  expect(acls).toHaveLength(1);
  return webAclSchema.parse(acls[0]?.Properties);
}

function ruleOf(stage: StageName, name: string): z.infer<typeof ruleSchema> {
  const rule = webAclOf(stage).Rules.find((candidate) => candidate.Name === name);
  if (!rule) throw new Error(`No rule ${name} on ${stage}`);
  return rule;
}

const rateStatementSchema = z.object({
  Limit: z.number(),
  EvaluationWindowSec: z.number(),
  AggregateKeyType: z.string(),
  ScopeDownStatement: z.unknown().optional(),
});

/** The regular expression of a scope-down statement: a RegexMatchStatement on the URI path, or NOT of one. */
function scopeRegex(statement: unknown): { negated: boolean; regex: RegExp; transformations: string[] } {
  const regexMatch = z.object({
    RegexMatchStatement: z.object({
      RegexString: z.string(),
      FieldToMatch: z.object({ UriPath: z.object({}) }),
      TextTransformations: z.array(z.object({ Priority: z.number(), Type: z.string() })),
    }),
  });
  const negated = z.object({ NotStatement: z.object({ Statement: regexMatch }) }).safeParse(statement);
  const inner = negated.success ? negated.data.NotStatement.Statement : regexMatch.parse(statement);
  return {
    negated: negated.success,
    regex: new RegExp(inner.RegexMatchStatement.RegexString),
    transformations: inner.RegexMatchStatement.TextTransformations.map((t) => t.Type),
  };
}

/** Paths of every route without a bearer token that a browser or a script calls, and the callbacks. */
const TOKEN_PATHS = ['/oauth2/token'];
const UNAUTHENTICATED_PATHS = [
  '/onboarding/processes/token/abc123',
  '/onboarding/processes/token/abc123/connect',
  '/onboarding/processes/token/abc123/onboard',
  '/onboarding/users/someone%40example.org/existence',
  '/connect',
  '/connect/email',
  '/connect/sign-in',
  '/connect/connect',
  '/connect/assets/page.css',
  '/simulated/payments/6f1c4a1e-0000-4000-8000-000000000000',
  '/simulated/payment-sources/6f1c4a1e-0000-4000-8000-000000000000',
  '/providers/stripe/return/payments/6f1c4a1e-0000-4000-8000-000000000000',
  '/providers/adyen/return/payment-sources/6f1c4a1e-0000-4000-8000-000000000000',
];
const CALLBACK_PATHS = ['/providers/stripe/events', '/providers/adyen/notifications'];
const AUTHENTICATED_PATHS = ['/payments', '/payments/6f1c4a1e-0000-4000-8000-000000000000/refunds', '/webhooks'];

describe('dev', () => {
  it('has no edge: no distribution, no web ACL, no firewall stack, no origin secret on the functions', () => {
    expect(STAGES.dev.edge).toBeUndefined();
    const dev = template(stackName('dev'));
    dev.resourceCountIs('AWS::CloudFront::Distribution', 0);
    dev.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(stacks.has(firewallStackOf('dev'))).toBe(false);
    const envs = Object.values(dev.findResources('AWS::Lambda::Function')).map((fn) =>
      JSON.stringify(fn.Properties?.Environment ?? {}),
    );
    expect(envs.some((env) => env.includes('SVC_EDGE_ORIGIN_SECRET'))).toBe(false);
  });
});

describe.each(['staging', 'prod'] as const)('the edge of %s', (stage) => {
  const edge = STAGES[stage].edge;

  it('has a CLOUDFRONT web ACL in a us-east-1 stack that the service stack deploys after', () => {
    const firewall = stacks.get(firewallStackOf(stage));
    expect(firewall?.region).toBe('us-east-1');
    const acl = webAclOf(stage);
    expect(acl.Scope).toBe('CLOUDFRONT');
    expect(acl.DefaultAction).toEqual({ Allow: {} });
    const service = stacks.get(stackName(stage));
    expect(service?.dependencies.map((d) => d.stackName)).toContain(firewallStackOf(stage));
  });

  it('has one distribution in front of the HTTP API, associated with the web ACL through the firewall stack output', () => {
    const service = template(stackName(stage));
    service.resourceCountIs('AWS::CloudFront::Distribution', 1);
    service.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        WebACLId: {
          'Fn::GetStackOutput': Match.objectLike({ StackName: firewallStackOf(stage), Region: 'us-east-1' }),
        },
      }),
    });
    const outputs = template(firewallStackOf(stage)).toJSON().Outputs as Record<string, { Value: unknown }>;
    const arn = Object.entries(outputs).find(([name]) => name === 'WebAclArn');
    expect(arn?.[1].Value).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
  });

  it('limits the token route per address first, then the unauthenticated routes, then all traffic, before the common rule set', () => {
    const names = [...webAclOf(stage).Rules].sort((a, b) => a.Priority - b.Priority).map((r) => r.Name);
    expect(names).toEqual(['TokenRoutePerAddress', 'UnauthenticatedPerAddress', 'PerAddress', 'CommonRuleSet']);
  });

  it.each([
    ['TokenRoutePerAddress', 'tokenRoute'],
    ['UnauthenticatedPerAddress', 'unauthenticated'],
    ['PerAddress', 'perAddress'],
  ] as const)('%s counts per client IP with the stage numbers and answers 429 with Retry-After', (name, key) => {
    const rule = ruleOf(stage, name);
    const statement = rateStatementSchema.parse(rule.Statement.RateBasedStatement);
    expect(statement).toMatchObject({
      Limit: edge?.[key].limit,
      EvaluationWindowSec: edge?.[key].windowSeconds,
      // The address CloudFront saw, not a header a client could write (FORWARDED_IP).
      AggregateKeyType: 'IP',
    });
    expect(statement.Limit).toBeGreaterThanOrEqual(10);
    expect(rule.Action).toEqual({
      Block: {
        CustomResponse: {
          ResponseCode: 429,
          CustomResponseBodyKey: 'too_many_requests',
          ResponseHeaders: [{ Name: 'Retry-After', Value: String(edge?.[key].windowSeconds) }],
        },
      },
    });
  });

  it('scopes the stricter rules to the token route and to every unauthenticated route, and nothing else', () => {
    const token = scopeRegex(
      rateStatementSchema.parse(ruleOf(stage, 'TokenRoutePerAddress').Statement.RateBasedStatement).ScopeDownStatement,
    );
    const open = scopeRegex(
      rateStatementSchema.parse(ruleOf(stage, 'UnauthenticatedPerAddress').Statement.RateBasedStatement)
        .ScopeDownStatement,
    );
    for (const scope of [token, open]) {
      expect(scope.negated).toBe(false);
      // Percent-encoded or dotted paths are decoded and normalised before matching.
      expect(scope.transformations).toEqual(['URL_DECODE', 'NORMALIZE_PATH']);
    }
    for (const path of TOKEN_PATHS) expect(token.regex.test(path), path).toBe(true);
    for (const path of UNAUTHENTICATED_PATHS) expect(open.regex.test(path), path).toBe(true);
    for (const path of [...UNAUTHENTICATED_PATHS, ...CALLBACK_PATHS, ...AUTHENTICATED_PATHS]) {
      expect(token.regex.test(path), path).toBe(false);
    }
    for (const path of [...TOKEN_PATHS, ...CALLBACK_PATHS, ...AUTHENTICATED_PATHS]) {
      expect(open.regex.test(path), path).toBe(false);
    }
  });

  it('classifies every route of the route table, whatever its path parameters: a new route without a bearer token must be placed', () => {
    const rateScope = (name: string) =>
      scopeRegex(rateStatementSchema.parse(ruleOf(stage, name).Statement.RateBasedStatement).ScopeDownStatement);
    const token = rateScope('TokenRoutePerAddress');
    const open = rateScope('UnauthenticatedPerAddress');
    const everything = rateScope('PerAddress');
    // By the route table's per-address class (packages/http route.ts): `credentials` and `address`
    // routes get the stricter rule (the token route its own), `provider-callback` routes neither it
    // nor the all-traffic limit, `public-read` ones the all-traffic limit only, but for the hosted
    // page's assets, which count with the page.
    const TOKEN_ROUTE = 'POST /oauth2/token';
    const countedWithThePage = new Set(['GET /connect/assets/{file}']);
    const entries = ROUTE_TABLE.filter((entry) => entry.key !== '$default');
    fc.assert(
      fc.property(
        fc.constantFrom(...entries),
        fc.stringMatching(/^[A-Za-z0-9._~%@+-]{1,40}$/).filter((value) => !/^\.+$/.test(value)),
        (entry, value) => {
          const path = entry.route.path.replace(/\{[^}]+\}/g, value);
          const limit: unknown = entry.route.limit;
          const isToken = entry.key === TOKEN_ROUTE;
          const isCallback = limit === 'provider-callback';
          const isOpen =
            entry.route.auth !== 'token' &&
            !isToken &&
            (limit === 'credentials' || limit === 'address' || countedWithThePage.has(entry.key));
          expect(token.regex.test(path), `${entry.key} as ${path}`).toBe(isToken);
          expect(open.regex.test(path), `${entry.key} as ${path}`).toBe(isOpen);
          // PerAddress and the common rule set skip a path when the (negated) callback pattern matches.
          expect(everything.regex.test(path), `${entry.key} as ${path}`).toBe(isCallback);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves the provider callbacks out of the all-traffic limit and the common rule set', () => {
    const perAddress = scopeRegex(
      rateStatementSchema.parse(ruleOf(stage, 'PerAddress').Statement.RateBasedStatement).ScopeDownStatement,
    );
    const common = z
      .object({
        ManagedRuleGroupStatement: z.object({
          VendorName: z.string(),
          Name: z.string(),
          ScopeDownStatement: z.unknown(),
          RuleActionOverrides: z.array(z.object({ Name: z.string(), ActionToUse: z.record(z.string(), z.unknown()) })),
        }),
      })
      .parse(ruleOf(stage, 'CommonRuleSet').Statement).ManagedRuleGroupStatement;
    expect(common).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    expect(ruleOf(stage, 'CommonRuleSet').OverrideAction).toEqual({ None: {} });
    const commonScope = scopeRegex(common.ScopeDownStatement);
    for (const scope of [perAddress, commonScope]) {
      expect(scope.negated).toBe(true);
      for (const path of CALLBACK_PATHS) expect(scope.regex.test(path), path).toBe(true);
      for (const path of [...TOKEN_PATHS, ...UNAUTHENTICATED_PATHS, ...AUTHENTICATED_PATHS]) {
        expect(scope.regex.test(path), path).toBe(false);
      }
    }
    // Rules of the set that would refuse legitimate requests count instead (docs/operations.md "Edge").
    expect(common.RuleActionOverrides.map((o) => [o.Name, o.ActionToUse])).toEqual([
      ['SizeRestrictions_BODY', { Count: {} }],
      ['NoUserAgent_HEADER', { Count: {} }],
      ['GenericRFI_BODY', { Count: {} }],
    ]);
  });

  it('forwards everything but Host, caches nothing, takes every method, HTTPS only with TLS 1.2 to the origin', () => {
    const service = template(stackName(stage));
    service.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          // Managed CachingDisabled and AllViewerExceptHostHeader (which carries CloudFront-Viewer-Address).
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          ViewerProtocolPolicy: 'https-only',
        }),
        Origins: [
          Match.objectLike({
            CustomOriginConfig: Match.objectLike({
              OriginProtocolPolicy: 'https-only',
              OriginSSLProtocols: ['TLSv1.2'],
            }),
          }),
        ],
        Logging: Match.objectLike({ Bucket: Match.anyValue() }),
      }),
    });
  });

  it('sends the origin secret as x-svc-origin-verify and gives every API function the same value', () => {
    const service = template(stackName(stage));
    const distribution = Object.values(service.findResources('AWS::CloudFront::Distribution'))[0];
    const origins = z
      .object({
        DistributionConfig: z.object({
          Origins: z.array(
            z.object({ OriginCustomHeaders: z.array(z.object({ HeaderName: z.string(), HeaderValue: z.unknown() })) }),
          ),
        }),
      })
      .parse(distribution?.Properties).DistributionConfig.Origins;
    const header = origins[0]?.OriginCustomHeaders.find((h) => h.HeaderName === 'x-svc-origin-verify');
    const value = JSON.stringify(header?.HeaderValue);
    // A dynamic reference to a Secrets Manager secret of this stack, resolved by CloudFormation.
    expect(value).toContain('{{resolve:secretsmanager:');
    const secretIds = Object.keys(service.findResources('AWS::SecretsManager::Secret')).filter((id) =>
      value.includes(id),
    );
    expect(secretIds).toHaveLength(1);

    const apiFunctions = Object.values(service.findResources('AWS::Lambda::Function')).filter((fn) =>
      JSON.stringify(fn.Properties?.Environment ?? {}).includes('SVC_CLIENT_RATE_LIMIT'),
    );
    expect(apiFunctions.length).toBeGreaterThan(5);
    for (const fn of apiFunctions) {
      const env = z
        .object({ Environment: z.object({ Variables: z.record(z.string(), z.unknown()) }) })
        .parse(fn.Properties).Environment.Variables;
      expect(JSON.stringify(env.SVC_EDGE_ORIGIN_SECRET)).toBe(value);
      // Links the functions build name the edge, not the execute-api host CloudFront calls.
      expect(JSON.stringify(env.SVC_PUBLIC_URL)).toContain('DomainName');
    }
  });

  it('passes the AWS Solutions checks, the firewall stack included', () => {
    for (const name of [stackName(stage), firewallStackOf(stage)]) {
      const stack = stacks.get(name);
      if (!stack) throw new Error(`No stack ${name}`);
      const findings = new AwsSolutionsChecks()
        .validateScope(stack)
        .violations.filter((v) => /CFR|WAF|S1|S2|S10|SMG|IAM/.test(v.ruleName))
        .map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(findings).toEqual([]);
    }
  });
});

describe('a stage with an edge and a custom domain', () => {
  it('serves the domain from the distribution with its us-east-1 certificate and TLS 1.2, not from API Gateway', () => {
    const app = new App(appProps(SKIP_BUNDLING));
    const certificateArn = 'arn:aws:acm:us-east-1:000000000000:certificate/11111111-2222-3333-4444-555555555555';
    const stack = new ServiceStack(app, 'edge-domain', {
      stage: { ...STAGES.staging, domain: { name: 'api.staging.example.org', certificateArn } },
      edgeFirewall: { stackName: 'edge-domain-firewall', outputName: 'WebAclArn' },
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['api.staging.example.org'],
        ViewerCertificate: Match.objectLike({
          AcmCertificateArn: certificateArn,
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        }),
      }),
    });
    t.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    t.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
    // The links the functions build and the ops tooling's base URL name the domain.
    t.hasOutput('ApiUrl', { Value: 'https://api.staging.example.org/' });
  });

  it('refuses a certificate outside us-east-1, naming the setting', () => {
    const certificateArn = 'arn:aws:acm:eu-central-2:000000000000:certificate/11111111-2222-3333-4444-555555555555';
    expect(
      () =>
        new ServiceStack(new App(appProps(SKIP_BUNDLING)), 'edge-domain', {
          stage: { ...STAGES.staging, domain: { name: 'api.staging.example.org', certificateArn } },
          edgeFirewall: { stackName: 'edge-domain-firewall', outputName: 'WebAclArn' },
        }),
    ).toThrow(/domain\.certificateArn must be an ACM certificate in us-east-1/);
  });
});
