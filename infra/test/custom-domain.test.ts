import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { type CustomDomainConfig, STAGES } from '../config/stages';
import { ServiceStack } from '../stacks/service-stack';
import { appProps, SKIP_BUNDLING } from './support/app-props';

const CERTIFICATE_ARN = 'arn:aws:acm:eu-central-2:000000000000:certificate/11111111-2222-3333-4444-555555555555';

/**
 * A stage without an edge (the API Gateway serves its domain): dev's config. A
 * stage with an edge serves its domain from CloudFront instead (edge.test.ts).
 */
function stackWith(domain: CustomDomainConfig | undefined): ServiceStack {
  expect(STAGES.dev.edge).toBeUndefined();
  return new ServiceStack(new App(appProps(SKIP_BUNDLING)), 'custom-domain', {
    stage: { ...STAGES.dev, ...(domain ? { domain } : {}) },
  });
}

describe('a stage without an edge, with a custom domain in its config', () => {
  it('maps the domain, with its certificate and TLS 1.2, onto the API stage', () => {
    const template = Template.fromStack(
      stackWith({ name: 'api.staging.example.org', certificateArn: CERTIFICATE_ARN }),
    );
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'api.staging.example.org',
      DomainNameConfigurations: [
        { CertificateArn: CERTIFICATE_ARN, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
      ],
    });
    template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 1);
  });

  it('passes the AWS Solutions checks', () => {
    const stack = stackWith({ name: 'api.staging.example.org', certificateArn: CERTIFICATE_ARN });
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  });
});

describe('a stage without one', () => {
  it('serves only the execute-api endpoint', () => {
    const template = Template.fromStack(stackWith(undefined));
    template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
  });
});
