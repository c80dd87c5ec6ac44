import { fileURLToPath } from 'node:url';
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionName } from '../api-routes.ts';

/** The repository root: entries and the lock file are resolved from it, whatever the cwd. */
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * How every entry point is bundled (scripts/esbuild-options.ts hands the same
 * options to esbuild directly, to measure the bundles and to run them in tests).
 */
export const acklineBundling = {
  format: OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings, not the sources: keeps the asset small.
  sourcesContent: false,
  // The AWS SDK v3 is bundled, not taken from the runtime: the version we
  // test is the version we run, and one tree-shaken file loads faster
  // (and more predictably on cold start) than the runtime's full SDK.
  externalModules: [],
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  logLevel: LogLevel.ERROR,
} as const satisfies BundlingOptions;

export interface AcklineFunctionProps {
  /** The folder under functions/ holding `handler.ts`. */
  readonly name: FunctionName;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly memorySizeMb: number;
  readonly timeout: Duration;
}

/**
 * One ackline entry point: `functions/<name>/handler.ts` bundled by esbuild
 * into a single ESM file for nodejs22.x on arm64, with its own log group (an
 * explicit LogGroup, not the deprecated `logRetention` option, which would add
 * a custom-resource Lambda to the stack) and its own role.
 *
 * The role starts empty but for writing to that one log group: not the
 * AWSLambdaBasicExecutionRole managed policy, which allows creating and
 * writing any log group in the account. The stack adds each function's table,
 * queue and secret grants to it.
 */
export class AcklineFunction extends Construct {
  public readonly function: NodejsFunction;
  public readonly role: Role;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: AcklineFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.logGroup = logGroup;
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `ackline ${props.name}: its log group, and the grants the stack adds`,
    });
    // logs:CreateLogStream and logs:PutLogEvents on this log group only.
    logGroup.grantWrite(this.role);
    this.function = new NodejsFunction(this, 'Function', {
      entry: `${projectRoot}functions/${props.name}/handler.ts`,
      handler: 'handler',
      depsLockFilePath: `${projectRoot}package-lock.json`,
      projectRoot,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySizeMb,
      timeout: props.timeout,
      role: this.role,
      logGroup,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      bundling: acklineBundling,
    });
  }
}
