import { fileURLToPath } from 'node:url';
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionName } from '../api-routes.ts';

/** The repository root: entries and the lock file are resolved from it, whatever the cwd. */
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

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
 * a custom-resource Lambda to the stack).
 */
export class AcklineFunction extends Construct {
  public readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: AcklineFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.function = new NodejsFunction(this, 'Function', {
      entry: `${projectRoot}functions/${props.name}/handler.ts`,
      handler: 'handler',
      depsLockFilePath: `${projectRoot}package-lock.json`,
      projectRoot,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySizeMb,
      timeout: props.timeout,
      logGroup,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
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
        banner:
          "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        logLevel: LogLevel.ERROR,
      },
    });
  }
}
