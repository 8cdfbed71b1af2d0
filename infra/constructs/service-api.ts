import type { RouteEntry, DomainName as ServiceDomain } from '@svc/api';
import { Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';

export interface ServiceApiProps {
  stage: StageConfig;
  routes: readonly RouteEntry[];
  /** The Lambda serving a domain's routes. */
  functionFor: (domain: ServiceDomain) => IFunction;
}

/**
 * One access-log line per request, as JSON so CloudWatch Logs Insights can query its fields.
 * The route key, not the path: some paths carry a credential (an onboarding process's token).
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
};

/**
 * The HTTP API, built from the route table so AWS and the local gateway serve the same routes.
 * Every route goes to its domain's Lambda; tokens are verified there (middy stack), not here.
 */
export class ServiceApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** The stage config's custom domain name, if it has one. */
  private readonly customDomainName: string | undefined;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const { stage } = props;
    this.customDomainName = stage.domain?.name;
    this.api = new HttpApi(this, 'HttpApi', {
      apiName: `svc-fundraising-${stage.name}`,
      description: `svc fundraising payments API (${stage.name})`,
      // Created below, with throttling and access logs the default stage cannot take.
      createDefaultStage: false,
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: stage.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
      ...(stage.domain ? { domainMapping: { domainName: this.customDomain(stage.domain) } } : {}),
    });

    // The token route's own throttle, all callers together: each call hashes a secret (scrypt).
    const credentialRoutes = props.routes.filter((entry) => entry.route.limit === 'credentials');
    (this.stage.node.defaultChild as CfnStage).routeSettings = Object.fromEntries(
      credentialRoutes.map((entry) => [
        routeKeyOf(entry).key,
        {
          ThrottlingRateLimit: stage.rateLimits.tokenRoute.rateLimit,
          ThrottlingBurstLimit: stage.rateLimits.tokenRoute.burstLimit,
        },
      ]),
    );

    const integrations = new Map<ServiceDomain, HttpLambdaIntegration>();
    const integrationFor = (domain: ServiceDomain): HttpLambdaIntegration => {
      let integration = integrations.get(domain);
      if (!integration) {
        // One invoke permission per function rather than per route: a Lambda resource policy
        // is capped at 20 KB, and the route table only grows.
        integration = new HttpLambdaIntegration(`${domain}-integration`, props.functionFor(domain), {
          scopePermissionToRoute: false,
        });
        integrations.set(domain, integration);
      }
      return integration;
    };

    for (const entry of props.routes) {
      const route = new HttpRoute(this, `Route ${entry.key}`, {
        httpApi: this.api,
        routeKey: routeKeyOf(entry),
        integration: integrationFor(entry.domain),
      });
      // The stage's route settings name it: CloudFormation must create it first.
      if (entry.route.limit === 'credentials') this.stage.node.addDependency(route);
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          entry.route.auth === 'token'
            ? 'The domain Lambda verifies the ES256 bearer token and loads the caller grants in its middy stack on every request; a gateway authorizer would verify it twice.'
            : 'Public by the interface contract (the route table marks it auth: none, e.g. health, API description, token endpoint); its handler never asks for a principal.',
      });
    }
  }

  /** The stage URL (the execute-api endpoint; a custom domain, if any, maps onto this stage). */
  get url(): string {
    return this.stage.url;
  }

  /**
   * The address clients are given, with a trailing slash: the custom domain where the stage
   * config has one, else the stage URL. It is what the functions see as the request's host
   * (lambda-handler's baseUrl), so links built here and there agree.
   */
  get publicUrl(): string {
    return this.customDomainName ? `https://${this.customDomainName}/` : this.url;
  }

  /** The hosted onboarding page (onboarding's `GET /connect`), as partners and organisations open it. */
  get connectUrl(): string {
    return `${this.publicUrl}connect`;
  }

  private customDomain(domain: NonNullable<StageConfig['domain']>): DomainName {
    return new DomainName(this, 'CustomDomain', {
      domainName: domain.name,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
  }
}

/** The table's key, checked against what CDK sends to API Gateway so the two cannot differ. */
function routeKeyOf(entry: RouteEntry): HttpRouteKey {
  const routeKey =
    entry.key === '$default'
      ? HttpRouteKey.DEFAULT
      : HttpRouteKey.with(entry.route.path, HttpMethod[entry.route.method]);
  if (routeKey.key !== entry.key) {
    throw new Error(`Route key mismatch: table says ${entry.key}, API Gateway would get ${routeKey.key}`);
  }
  return routeKey;
}
