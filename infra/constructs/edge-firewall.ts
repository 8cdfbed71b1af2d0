import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { AddressRateRule, EdgeConfig } from '../config/stages';

/**
 * The token route, as API Gateway routes it (`POST /oauth2/token`; the method is left out: any
 * other method there is a 404 that still costs the origin a request).
 */
export const TOKEN_ROUTE_PATTERN = '^/oauth2/token/?$';

/**
 * Every route without a bearer token that people's browsers (or scripts posing as them) call, from
 * the route table's `auth: none` routes: the hosted onboarding page and its POSTs (`/connect…`),
 * onboarding links and their connect/onboard POSTs, the e-mail existence check, the simulated
 * provider's 3-D Secure / TWINT pages and the Stripe and Adyen return pages, and the donor portal
 * (its pages, login and JSON API, all on a session cookie or none). Health, the API
 * description and the docs are left to the all-traffic limit; the token route has its own rule;
 * provider callbacks are below.
 */
export const UNAUTHENTICATED_ROUTES_PATTERN =
  '^/(connect(/.*)?|onboarding/processes/token/[^/]+(/(connect|onboard))?|onboarding/users/[^/]+/existence|simulated/.+|providers/[^/]+/return/.+|portal(/.*)?)$';

/**
 * Stripe's and Adyen's callbacks. They come from the providers' few sending addresses carrying
 * every organisation's events (a telethon's thousands a second), so a per-address limit would
 * refuse them, and their bodies are the providers' JSON (Adyen's notifications hold URLs and
 * free text) that the common rule set was not written for. The functions verify each one's
 * signature (Stripe-Signature, Adyen's HMAC) before reading it, and API Gateway's stage throttle
 * still bounds them.
 */
export const PROVIDER_CALLBACKS_PATTERN = '^/providers/(stripe/events|adyen/notifications)/?$';

/** The 429 body, in the contract's error shape (docs/API.md "Rate limits"). */
const TOO_MANY_REQUESTS_BODY = JSON.stringify({
  error: {
    code: 'too_many_requests',
    message: 'Too many requests from this address; retry later',
  },
});

/**
 * Rules of AWSManagedRulesCommonRuleSet (700 WCU) that would refuse legitimate requests, made to
 * count (metrics and sampled requests still show each match). Rule names and what they match:
 * https://docs.aws.amazon.com/waf/latest/developerguide/aws-managed-rule-groups-baseline.html
 * - SizeRestrictions_BODY blocks bodies over 8 KB; the API takes bodies up to its own limit
 *   (256 KiB, checked by the functions), e.g. payments with metadata and batch requests.
 * - NoUserAgent_HEADER blocks requests without a User-Agent: the API's callers are servers
 *   (form backends, partners' integrations), and many HTTP clients send none.
 * - GenericRFI_BODY blocks bodies holding URLs with an IPv4 address: webhook endpoint URLs and
 *   return URLs are such values here, and the service validates them itself.
 */
export const COMMON_RULE_SET_COUNTED = ['SizeRestrictions_BODY', 'NoUserAgent_HEADER', 'GenericRFI_BODY'] as const;

export interface EdgeFirewallProps {
  /** e.g. `svc-fundraising-prod`: names the web ACL and its metrics. */
  name: string;
  edge: EdgeConfig;
}

/**
 * The AWS WAF web ACL CloudFront evaluates before a request reaches API Gateway, so its limits
 * act before the stage throttle every caller shares: WAF's rules apply when CloudFront receives the
 * viewer's request, before even a viewer-request function and before the origin request
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/lambda-edge-event-request-response.html),
 * and a blocked request is answered by CloudFront itself
 * (https://docs.aws.amazon.com/waf/latest/developerguide/cloudfront-waf-use-cases.html).
 * Scope CLOUDFRONT: such a web ACL must be created in us-east-1
 * (https://docs.aws.amazon.com/waf/latest/APIReference/API_CreateWebACL.html, `Scope`), hence its
 * own stack (infra/stacks/edge-firewall-stack.ts). Rules in priority order, the cheapest and
 * strictest first; a request blocked by one is not counted by the next.
 */
export class EdgeFirewall extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeFirewallProps) {
    super(scope, id);
    const { name, edge } = props;
    const visibility = (metric: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${name}-${metric}`,
      sampledRequestsEnabled: true,
    });
    const perAddressRule = (
      ruleName: string,
      priority: number,
      rate: AddressRateRule,
      scopeDownStatement: CfnWebACL.StatementProperty,
    ): CfnWebACL.RuleProperty => ({
      name: ruleName,
      priority,
      statement: {
        rateBasedStatement: {
          limit: rate.limit,
          evaluationWindowSec: rate.windowSeconds,
          // The address the request came from as CloudFront sees it, which no client can write
          // (FORWARDED_IP would trust a header).
          aggregateKeyType: 'IP',
          scopeDownStatement,
        },
      },
      // The contract's 429 with Retry-After (docs/API.md "Rate limits"): the block lasts until the
      // address's count over the window falls under the limit, so at most one window. A custom
      // response may carry any header but content-type, unprefixed (the x-amzn-waf- prefix is for
      // headers inserted into requests):
      // https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html
      action: {
        block: {
          customResponse: {
            responseCode: 429,
            customResponseBodyKey: 'too_many_requests',
            responseHeaders: [{ name: 'Retry-After', value: String(rate.windowSeconds) }],
          },
        },
      },
      visibilityConfig: visibility(ruleName),
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: `${name}-edge`,
      description: `Per-address limits and the AWS common rule set in front of the ${name} API`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      customResponseBodies: {
        too_many_requests: { contentType: 'APPLICATION_JSON', content: TOO_MANY_REQUESTS_BODY },
      },
      visibilityConfig: visibility('edge'),
      rules: [
        perAddressRule('TokenRoutePerAddress', 0, edge.tokenRoute, pathMatches(TOKEN_ROUTE_PATTERN)),
        perAddressRule(
          'UnauthenticatedPerAddress',
          1,
          edge.unauthenticated,
          pathMatches(UNAUTHENTICATED_ROUTES_PATTERN),
        ),
        perAddressRule('PerAddress', 2, edge.perAddress, {
          notStatement: { statement: pathMatches(PROVIDER_CALLBACKS_PATTERN) },
        }),
        {
          name: 'CommonRuleSet',
          priority: 3,
          // The group's own actions (block), but for the rules above.
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              ruleActionOverrides: COMMON_RULE_SET_COUNTED.map((rule) => ({
                name: rule,
                actionToUse: { count: {} },
              })),
              scopeDownStatement: { notStatement: { statement: pathMatches(PROVIDER_CALLBACKS_PATTERN) } },
            },
          },
          visibilityConfig: visibility('CommonRuleSet'),
        },
      ],
    });
  }
}

/**
 * The request's path matches `pattern` once percent-decoded and normalised (`//`, `./`, `../`
 * removed), so `/oauth2/%74oken` or `/x/../oauth2/token` is counted like `/oauth2/token`.
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-transformation.html
 */
function pathMatches(pattern: string): CfnWebACL.StatementProperty {
  return {
    regexMatchStatement: {
      regexString: pattern,
      fieldToMatch: { uriPath: {} },
      textTransformations: [
        { priority: 0, type: 'URL_DECODE' },
        { priority: 1, type: 'NORMALIZE_PATH' },
      ],
    },
  };
}
