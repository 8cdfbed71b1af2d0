import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { type EdgeConfig, type StageConfig, StageConfigurationError } from '../config/stages';

/**
 * The header CloudFront adds to every origin request, with the stage's origin secret: the API
 * refuses a request without it (403) where SVC_EDGE_ORIGIN_SECRET is set (packages/http), so the
 * execute-api endpoint cannot be called around the web ACL. Custom origin headers are CloudFront's
 * way of "identifying requests from CloudFront"
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/forward-custom-headers.html);
 * that page also says CloudFront overwrites a header of the same name sent by the viewer (recalled,
 * not in the excerpt read here: a viewer's guess would in any case have to equal the secret).
 */
export const ORIGIN_VERIFY_HEADER = 'x-svc-origin-verify';

/** The functions' variable holding the same secret value. */
export const ORIGIN_SECRET_ENV = 'SVC_EDGE_ORIGIN_SECRET';

export interface EdgeProps {
  stage: StageConfig;
  edge: EdgeConfig;
  api: HttpApi;
  /** The web ACL's ARN (from the us-east-1 firewall stack's output). */
  webAclArn: string;
}

/**
 * CloudFront in front of the HTTP API, which cannot take an AWS WAF web ACL itself (WAF protects
 * REST APIs, not HTTP APIs: https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-vs-rest.html,
 * "Security"). Nothing is cached; every method, header (but Host), cookie and query string goes
 * to the origin.
 */
export class Edge extends Construct {
  readonly distribution: Distribution;
  /** The value CloudFront sends in ORIGIN_VERIFY_HEADER: generated, kept in Secrets Manager. */
  readonly originSecret: Secret;
  /** The access logs of the distribution (client address, path, status, WAF outcome per request). */
  readonly logs: Bucket;
  private readonly customDomainName: string | undefined;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);
    const { stage, edge, api } = props;

    // A new secret (new logical id) per rotation: its ARN changes, so the dynamic references in
    // the distribution and the functions change and both are updated by the same deploy.
    this.originSecret = new Secret(
      this,
      edge.originSecretRotation === 1 ? 'OriginSecret' : `OriginSecret${edge.originSecretRotation}`,
      {
        description: `The value CloudFront sends the ${stage.name} API in ${ORIGIN_VERIFY_HEADER}; the functions compare it (${ORIGIN_SECRET_ENV})`,
        generateSecretString: { passwordLength: 48, excludePunctuation: true },
        // Nothing is sealed under it: a rotation replaces it, and the old one is of no use.
        removalPolicy: RemovalPolicy.DESTROY,
      },
    );
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated by a deploy (edge.originSecretRotation in infra/config/stages.ts): the distribution and the functions must take the new value together, which a rotation Lambda cannot do; docs/operations.md "Edge".',
    });

    this.logs = new Bucket(this, 'Logs', {
      // CloudFront standard logs (legacy) are written with an ACL, so the bucket takes ACLs
      // (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logging-legacy-s3.html).
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(stage.logRetention) }],
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.logs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "This bucket holds the distribution's access logs; logging access to it into another bucket would only move the question one bucket further.",
    });

    const domain = stage.domain;
    this.customDomainName = domain?.name;
    if (domain && !Token.isUnresolved(domain.certificateArn) && !domain.certificateArn.includes(':us-east-1:')) {
      throw new StageConfigurationError(
        `Stage ${stage.name} serves ${domain.name} from CloudFront (edge), which takes certificates from us-east-1 only: domain.certificateArn must be an ACM certificate in us-east-1 (got ${domain.certificateArn})`,
      );
    }

    // The origin secret as a CloudFormation dynamic reference: resolved at deploy, never in the
    // template. "The secretsmanager dynamic reference can be used in all resource properties", the
    // value "may show up in the service whose resource it's being used in" (here CloudFront's and
    // Lambda's configuration), and a changed secret is taken only by a stack update of the resource
    // (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/dynamic-references-secretsmanager.html):
    // hence a new secret per rotation, above.
    const secretValue = this.originSecret.secretValue.unsafeUnwrap();
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `svc fundraising API (${stage.name})`,
      defaultBehavior: {
        origin: new HttpOrigin(`${api.apiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}`, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          customHeaders: { [ORIGIN_VERIFY_HEADER]: secretValue },
        }),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        // An API: every answer is the caller's own.
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Every viewer header (Authorization, Content-Type, Idempotency-Key, Stripe-Signature…),
        // cookie and query string, and the CloudFront headers (CloudFront-Viewer-Address among
        // them), but Host: API Gateway answers 403 to a Host it does not serve. AWS's choice for
        // API Gateway origins:
        // https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-origin-request-policies.html#managed-origin-request-policy-all-viewer-except-host-header
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // A redirect would lose a POST's body: plain HTTP is refused.
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        compress: true,
      },
      webAclId: props.webAclArn,
      httpVersion: HttpVersion.HTTP2_AND_3,
      // Edges in North America and Europe (where the donors are); others are served from there.
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: this.logs,
      logFilePrefix: 'cloudfront/',
      ...(domain
        ? {
            domainNames: [domain.name],
            certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
            // Viewers' TLS: 1.2 and up (a choice only a distribution with its own certificate has).
            minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'Donors and organisations may be anywhere; there is no country to refuse. Abuse is limited per address by the web ACL.',
    });
    if (!domain) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          "Without a custom domain the distribution serves *.cloudfront.net with CloudFront's default certificate, whose viewer TLS policy cannot be chosen; with one (stage domain) it is TLSv1.2_2021.",
      });
    }
  }

  /** The address clients are given, with a trailing slash: the custom domain, else the distribution's. */
  get publicUrl(): string {
    return `https://${this.customDomainName ?? this.distribution.distributionDomainName}/`;
  }
}
