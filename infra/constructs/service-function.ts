import { dirname } from 'node:path';
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { fromRepoRoot, LOCK_FILE, REPO_ROOT } from './repo-paths';

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
  bundleTime?: { define: Record<string, string>; alias: Record<string, string>; files?: Record<string, string> };
}

/**
 * How every function is bundled (esbuild): the CDK's NodejsFunction builds with these, and
 * `pnpm invoke` builds the one function it runs with the same (infra/invoke/run.ts).
 */
export const BUNDLE = {
  format: 'esm',
  target: 'node22',
  mainFields: ['module', 'main'],
  // The embedded search engine of the local runtime: never loaded in AWS (the Data API is).
  externalModules: ['@electric-sql/pglite'],
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
} as const;

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
  readonly function: NodejsFunction;
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

    this.function = new NodejsFunction(this, 'Function', {
      entry: fromRepoRoot(props.entry),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: props.timeout ?? Duration.seconds(15),
      role: this.role,
      logGroup: this.logGroup,
      // Every invocation is traced in X-Ray (the runtime sends the segments; see Tracing below).
      tracing: Tracing.ACTIVE,
      projectRoot: REPO_ROOT,
      depsLockFilePath: LOCK_FILE,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE.target,
        minify: true,
        sourceMap: true,
        // Stack traces need names and lines, not the sources; keeps the bundle small.
        sourcesContent: false,
        mainFields: [...BUNDLE.mainFields],
        // The SDK versions the tests ran against (the lock file's), not whatever the runtime ships.
        bundleAwsSDK: true,
        externalModules: [...BUNDLE.externalModules],
        banner: BUNDLE.banner,
        forceDockerBundling: false,
        ...(props.bundleTime
          ? {
              define: props.bundleTime.define,
              esbuildArgs: Object.fromEntries(
                Object.entries(props.bundleTime.alias).map(([name, path]) => [`--alias:${name}`, path]),
              ),
              commandHooks: copyIntoBundle(props.bundleTime.files ?? {}),
            }
          : {}),
        // Bundle sizes on every synth are noise; esbuild still reports warnings and errors.
        logLevel: LogLevel.WARNING,
      },
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

const quoted = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;

/** Bundling hooks that copy `files` (path in the bundle → source path) beside the bundled code. */
function copyIntoBundle(files: Record<string, string>) {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) =>
      Object.entries(files).flatMap(([target, source]) => {
        const destination = `${outputDir}/${target}`;
        return [`mkdir -p ${quoted(dirname(destination))}`, `cp ${quoted(source)} ${quoted(destination)}`];
      }),
  };
}
