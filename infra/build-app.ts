import { App, CrossStackReferences, ReferenceStrength, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { StatefulStack } from './stateful-stack.ts';
import { StatelessStack } from './stateless-stack.ts';

export interface BuildAppOptions {
  /**
   * Context for the App. The CLI passes cdk.json's context through the
   * environment, so `cdk synth` needs none; tests pass it here.
   */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly outdir?: string;
}

export interface AcklineApp {
  readonly app: App;
  readonly stage: string;
  readonly stateful: StatefulStack;
  readonly stateless: StatelessStack;
}

const DEFAULT_STAGE = 'dev';
const DEFAULT_LOG_RETENTION_DAYS = 30;
const removalPolicies: Readonly<Record<string, RemovalPolicy>> = {
  retain: RemovalPolicy.RETAIN,
  snapshot: RemovalPolicy.SNAPSHOT,
  destroy: RemovalPolicy.DESTROY,
};

/**
 * Builds ackline's CDK app without synthesizing it, so tests can assert on the
 * stacks without the CLI. Stacks are environment-agnostic: synth needs no
 * credentials, and `cdk deploy` targets the caller's account and region.
 *
 * Context: `ackline:stage` (default dev), `ackline:logRetentionDays` (30),
 * `ackline:removalPolicy` (retain | snapshot | destroy; retain by default),
 * `ackline:superuserRoles`, `ackline:maxEntriesPerLedger`.
 */
export function buildApp(options: BuildAppOptions = {}): AcklineApp {
  const app = new App({
    ...(options.context === undefined ? {} : { context: { ...options.context } }),
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
  });
  // Strong (Fn::ImportValue) references unless cdk.json says otherwise, stated
  // rather than defaulted: the stateful stack cannot drop an export the
  // stateless stack still imports, so removing a table later takes two deploys.
  if (app.node.tryGetContext('@aws-cdk/core:defaultCrossStackReferences') === undefined) {
    CrossStackReferences.of(app).consume(ReferenceStrength.STRONG);
  }
  const stage = String(app.node.tryGetContext('ackline:stage') ?? DEFAULT_STAGE);
  // The stage names stacks and prefixes queue names (80 characters at most).
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(`ackline:stage must match [a-z][a-z0-9-]{0,19}, got '${stage}'`);
  }

  const stateful = new StatefulStack(app, `Ackline-${stage}-Stateful`, {
    stage,
    removalPolicy: removalPolicyFrom(app.node.tryGetContext('ackline:removalPolicy')),
    description: `ackline ${stage}: tables and the scheduler queue`,
  });
  const superuserRoles: unknown = app.node.tryGetContext('ackline:superuserRoles');
  const maxEntriesPerLedger: unknown = app.node.tryGetContext('ackline:maxEntriesPerLedger');
  const stateless = new StatelessStack(app, `Ackline-${stage}-Stateless`, {
    stage,
    tables: stateful.tables,
    schedulerQueue: stateful.schedulerQueue,
    logRetention: retentionFrom(app.node.tryGetContext('ackline:logRetentionDays')),
    ...(superuserRoles === undefined ? {} : { superuserRoles: String(superuserRoles) }),
    ...(maxEntriesPerLedger === undefined ? {} : { maxEntriesPerLedger: Number(maxEntriesPerLedger) }),
    description: `ackline ${stage}: functions and the REST API`,
  });
  return { app, stage, stateful, stateless };
}

function retentionFrom(value: unknown): RetentionDays {
  const days = Number(value ?? DEFAULT_LOG_RETENTION_DAYS);
  const allowed = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
  if (!allowed.includes(days)) {
    throw new Error(`ackline:logRetentionDays must be one of ${allowed.join(', ')}, got '${String(value)}'`);
  }
  return days as RetentionDays;
}

function removalPolicyFrom(value: unknown): RemovalPolicy {
  if (value === undefined) return RemovalPolicy.RETAIN;
  const policy = removalPolicies[String(value)];
  if (policy === undefined) {
    throw new Error(`ackline:removalPolicy must be retain, snapshot or destroy, got '${String(value)}'`);
  }
  return policy;
}
