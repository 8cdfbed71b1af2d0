import { createHash } from 'node:crypto';
import { AssetHashType, DockerImage, Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { type BundleTime, buildFunctionSync, TRACE_CALLS_CONTEXT, type TracerPlacement } from './bundle';
import { fromRepoRoot, REPO_ROOT } from './repo-paths';

/**
 * Why a function role may name `*`: active tracing grants xray:PutTraceSegments and
 * xray:PutTelemetryRecords, which support no resource-level permissions. Roles with another
 * wildcard of the same kind extend this reason rather than replace it.
 */
export const TRACING_WILDCARD_REASON =
  'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.';

export interface ServiceFunctionProps {
  /** The handler's source file, relative to the repository root (as in DOMAINS). */
  entry: string;
  description: string;
  memoryMb: number;
  timeout?: Duration;
  environment?: Record<string, string>;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
  /**
   * Fixed at bundle time (the platform's API description and reference): esbuild `define`s,
   * module aliases, and files copied beside the bundle (path in the bundle → source path).
   */
  bundleTime?: BundleTime;
}

export { BUNDLE } from './bundle';

/**
 * A Lambda function with this repo's defaults fixed once: Node 22 on arm64, an ESM bundle built
 * by the local esbuild (never Docker, so synth works offline), its own log group with the stage's
 * retention, active X-Ray tracing, and its own role that may write only to that log group (and
 * send its traces) until a grant adds more.
 */
export class ServiceFunction extends Construct {
  /** The handler's source file, relative to the repository root. */
  readonly entry: string;
  readonly bundleTime: ServiceFunctionProps['bundleTime'];
  /** Where Powertools Tracer is in the asset (see TracerPlacement). */
  readonly tracerPlacement: TracerPlacement;
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.entry = props.entry;
    this.bundleTime = props.bundleTime;
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // Not AWSLambdaBasicExecutionRole: that managed policy may write to every log group.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (execution role)`,
    });
    this.logGroup.grantWrite(this.role);

    const entry = fromRepoRoot(props.entry);
    const bundleTime = props.bundleTime;
    // The stage's tracing (set on the stack before its functions, see TRACE_CALLS_CONTEXT).
    const tracer: TracerPlacement = this.node.tryGetContext(TRACE_CALLS_CONTEXT) === true ? 'bundled' : 'beside';
    this.tracerPlacement = tracer;
    this.function = new LambdaFunction(this, 'Function', {
      // Built by the local esbuild (never Docker, so synth works offline) with code splitting:
      // see `bundleOptions`. The asset is named for the hash of what was built.
      code: Code.fromAsset(REPO_ROOT, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          // Required by the type, never pulled: the local build below always answers.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          // Never run either, but part of the key under which the CDK keeps one build per app:
          // without what tells the functions apart, every function would get the first one's code.
          command: [
            'esbuild',
            props.entry,
            `tracer-${tracer}`,
            createHash('sha256')
              .update(JSON.stringify(bundleTime ?? {}))
              .digest('hex'),
          ],
          local: {
            tryBundle(outputDir) {
              buildFunctionSync(entry, outputDir, bundleTime, tracer);
              return true;
            },
          },
        },
      }),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: props.timeout ?? Duration.seconds(15),
      role: this.role,
      logGroup: this.logGroup,
      // Every invocation is traced in X-Ray (the runtime sends the segments; see Tracing below).
      tracing: Tracing.ACTIVE,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    });

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: TRACING_WILDCARD_REASON,
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime the design fixes for every function (esbuild target node22); moving to a newer runtime is a deliberate, tested upgrade, not a default.',
    });
  }
}
