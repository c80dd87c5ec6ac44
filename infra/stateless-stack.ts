import { ArnFormat, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AuthorizationType,
  IdentitySource,
  LambdaIntegration,
  RequestAuthorizer,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { queuePrefix, schedulerQueue as schedulerQueueDefinition } from '../shared/config/resources.ts';
import { apiRoutes, type FunctionName, functionNames, publicPaths } from './api-routes.ts';
import { AcklineFunction } from './constructs/ackline-function.ts';
import type { AcklineTable } from './stateful-stack.ts';

export interface StatelessStackProps extends StackProps {
  readonly stage: string;
  readonly tables: readonly AcklineTable[];
  readonly schedulerQueue: IQueue;
  readonly logRetention: RetentionDays;
  /** ACKLINE_SUPERUSER_ROLES, comma-separated; the functions' default applies when absent. */
  readonly superuserRoles?: string;
  readonly maxEntriesPerLedger?: number;
}

type TableAccess = 'none' | 'read' | 'readWrite';

interface FunctionSettings {
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  readonly tableAccess: TableAccess;
  /** Sends to the scheduler's delay queue. */
  readonly schedules: boolean;
  /** Creates, feeds and drains the per-subscription queues. */
  readonly subscriptionQueues: boolean;
}

/**
 * Skeleton grants, deliberately coarse (no wildcard actions): least privilege
 * per use case comes with the deploy issue. The authorizer reads permissions
 * from the catalog. The scheduler's timeout stays at a sixth of its queue's
 * visibility timeout, as AWS advises for SQS event sources.
 */
const settings: Record<FunctionName, FunctionSettings> = {
  'admin-api': {
    memorySizeMb: 1024,
    timeoutSeconds: 29,
    tableAccess: 'readWrite',
    schedules: true,
    subscriptionQueues: true,
  },
  'data-api': {
    memorySizeMb: 1024,
    timeoutSeconds: 29,
    tableAccess: 'readWrite',
    schedules: true,
    subscriptionQueues: true,
  },
  authorizer: {
    memorySizeMb: 512,
    timeoutSeconds: 10,
    tableAccess: 'read',
    schedules: false,
    subscriptionQueues: false,
  },
  scheduler: {
    memorySizeMb: 512,
    timeoutSeconds: schedulerQueueDefinition.visibilityTimeoutSeconds / 6,
    tableAccess: 'readWrite',
    schedules: true,
    subscriptionQueues: true,
  },
  maintenance: {
    memorySizeMb: 512,
    timeoutSeconds: 240,
    tableAccess: 'readWrite',
    schedules: true,
    subscriptionQueues: true,
  },
};

/** What the control plane and the delivery path do to the queues they create at run time. */
const subscriptionQueueActions = [
  'sqs:CreateQueue',
  'sqs:GetQueueUrl',
  'sqs:GetQueueAttributes',
  'sqs:SetQueueAttributes',
  'sqs:DeleteQueue',
  'sqs:SendMessage',
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
];

/**
 * Everything that can be replaced at will: the functions, the REST API and
 * their wiring to the stateful stack's tables and queues.
 */
export class StatelessStack extends Stack {
  public readonly functions: Readonly<Record<FunctionName, NodejsFunction>>;
  public readonly api: RestApi;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const prefix = queuePrefix(props.stage);

    const environment: Record<string, string> = {
      ACKLINE_STAGE: props.stage,
      ACKLINE_QUEUE_PREFIX: prefix,
      [schedulerQueueDefinition.envVar]: props.schedulerQueue.queueUrl,
    };
    for (const { definition, table } of props.tables) environment[definition.envVar] = table.tableName;
    if (props.superuserRoles !== undefined) environment.ACKLINE_SUPERUSER_ROLES = props.superuserRoles;
    if (props.maxEntriesPerLedger !== undefined) {
      environment.ACKLINE_MAX_ENTRIES_PER_LEDGER = String(props.maxEntriesPerLedger);
    }

    // Queues created at run time are named `<prefix><...>`; the scheduler queue
    // has a CloudFormation-generated name outside that prefix.
    const subscriptionQueuesArn = Stack.of(this).formatArn({
      service: 'sqs',
      resource: `${prefix}*`,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });

    const functions = {} as Record<FunctionName, NodejsFunction>;
    for (const name of functionNames) {
      const setting = settings[name];
      const fn = new AcklineFunction(this, constructId(name), {
        name,
        environment,
        logRetention: props.logRetention,
        memorySizeMb: setting.memorySizeMb,
        timeout: Duration.seconds(setting.timeoutSeconds),
      }).function;
      for (const { table } of props.tables) {
        if (setting.tableAccess === 'readWrite') table.grantReadWriteData(fn);
        if (setting.tableAccess === 'read') table.grantReadData(fn);
      }
      if (setting.schedules) props.schedulerQueue.grantSendMessages(fn);
      if (setting.subscriptionQueues) {
        fn.addToRolePolicy(
          new PolicyStatement({ actions: subscriptionQueueActions, resources: [subscriptionQueuesArn] }),
        );
      }
      functions[name] = fn;
    }
    this.functions = functions;

    functions.scheduler.addEventSource(
      new SqsEventSource(props.schedulerQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
    new Rule(this, 'MaintenanceSchedule', {
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(functions.maintenance)],
    });

    this.api = new RestApi(this, 'Api', {
      restApiName: `ackline-${props.stage}`,
      deployOptions: { stageName: props.stage },
      // The account-wide CloudWatch role is a singleton per region; access logs
      // (and the role, if the account lacks one) are the deploy issue's call.
      cloudWatchRole: false,
    });
    // Cache TTL 0: a REQUEST authorizer's policy is cached per identity and
    // would then be reused for other paths and methods of the same token.
    const authorizer = new RequestAuthorizer(this, 'TokenAuthorizer', {
      handler: functions.authorizer,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(0),
    });

    const integrations = new Map<FunctionName, LambdaIntegration>();
    const integrationFor = (name: FunctionName): LambdaIntegration => {
      let integration = integrations.get(name);
      if (integration === undefined) {
        integration = new LambdaIntegration(functions[name], { proxy: true });
        integrations.set(name, integration);
      }
      return integration;
    };

    for (const route of apiRoutes) {
      this.api.root
        .resourceForPath(route.firstSegment)
        .addResource('{proxy+}')
        .addMethod('ANY', integrationFor(route.functionName), {
          authorizationType: AuthorizationType.CUSTOM,
          authorizer,
        });
    }
    // A public path is an explicit resource: API Gateway prefers it to the
    // sibling {proxy+} for its method only; every other method still goes
    // through the authorizer.
    for (const { method, path } of publicPaths) {
      const firstSegment = path.split('/')[1];
      const route = apiRoutes.find((candidate) => candidate.firstSegment === firstSegment);
      if (route === undefined) throw new Error(`public path ${path} is under no route of apiRoutes`);
      this.api.root
        .resourceForPath(path)
        .addMethod(method, integrationFor(route.functionName), { authorizationType: AuthorizationType.NONE });
    }
  }
}

/** `admin-api` -> `AdminApi`. */
function constructId(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
