import { ArnFormat, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import { tokenSettingsEnv } from '../shared/config/load-config.ts';
import { queuePrefix, schedulerQueue as schedulerQueueDefinition } from '../shared/config/resources.ts';
import {
  AUTHORIZER_RESULT_TTL_SECONDS,
  apiRoutes,
  type FunctionName,
  functionNames,
  gatewayResponses,
  MAINTENANCE_TIMEOUT_SECONDS,
  publicPaths,
  SCHEDULER_MAX_CONCURRENCY,
  SCHEDULER_TIMEOUT_SECONDS,
} from './api-routes.ts';
import { AcklineFunction } from './constructs/ackline-function.ts';
import { MAINTENANCE_INTERVAL, Observability, pascal } from './constructs/observability.ts';
import { tableItemActions } from './constructs/table-item-actions.ts';
import { grantTokenSecretRead, type TokenSecretReference } from './constructs/token-secret-access.ts';
import type { AcklineTable } from './stateful-stack.ts';

export interface StatelessStackProps extends StackProps {
  readonly stage: string;
  readonly tables: readonly AcklineTable[];
  readonly schedulerQueue: IQueue;
  readonly schedulerDeadLetterQueue: IQueue;
  readonly logRetention: RetentionDays;
  /** Where the authorizer reads the token secret or public key; only the authorizer may. */
  readonly tokenSecret: TokenSecretReference;
  /** How the authorizer verifies tokens beyond the key; its defaults apply to what is absent. */
  readonly tokenSettings?: TokenSettings;
  /**
   * Create API Gateway's account-level CloudWatch Logs role (AWS::ApiGateway::Account),
   * without which a stage cannot write access or execution logs. One per account and
   * region; false when the account already has one.
   */
  readonly apiGatewayCloudWatchRole: boolean;
  /** SNS topic ARN that hears every alarm; none by default. */
  readonly alarmTopicArn?: string;
  /** ACKLINE_SUPERUSER_ROLES, comma-separated; the functions' default applies when absent. */
  readonly superuserRoles?: string;
  readonly maxEntriesPerLedger?: number;
  /** ACKLINE_AUDIT_RETENTION_DAYS; the functions' default (30) applies when absent. */
  readonly auditRetentionDays?: number;
  /**
   * ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES and ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: retention
   * where no namespace or topic policy sets one; the functions' default (Pulsar's 0/0) applies when absent.
   */
  readonly defaultRetention?: { readonly retentionTimeInMinutes: number; readonly retentionSizeInMB: number };
  /** ACKLINE_MAX_UNACKED_PER_CONSUMER; the functions' default (50,000) applies when absent. */
  readonly maxUnackedPerConsumer?: number;
  /** ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION; the functions' default (200,000) applies when absent. */
  readonly maxUnackedPerSubscription?: number;
  /**
   * Reserved concurrency per function; none by default. A reservation comes out of the account's
   * concurrency and must leave its unreserved minimum (100), so an account whose limit is low (a
   * new one's often is) refuses it: it is an opt-in (`ackline:reservedConcurrency`).
   */
  readonly reservedConcurrency?: Partial<Record<FunctionName, number>>;
  /**
   * The most scheduler invocations its SQS event source runs at once (2..1000; default
   * SCHEDULER_MAX_CONCURRENCY). With a reserved concurrency for the scheduler, at most that.
   */
  readonly schedulerMaxConcurrency?: number;
}

/** The authorizer's token settings (shared/config/load-config.ts tokenSettingsEnv). */
export interface TokenSettings {
  readonly audience?: string;
  readonly audienceClaim?: string;
  readonly roleClaim?: string;
  readonly clockToleranceSeconds?: number;
}

/** The authorizer's environment for {@link TokenSettings}. */
function tokenSettingsEnvironment(settings: TokenSettings = {}): Record<string, string> {
  const environment: Record<string, string> = {};
  if (settings.audience !== undefined) environment[tokenSettingsEnv.audience] = settings.audience;
  if (settings.audienceClaim !== undefined)
    environment[tokenSettingsEnv.audienceClaim] = settings.audienceClaim;
  if (settings.roleClaim !== undefined) environment[tokenSettingsEnv.roleClaim] = settings.roleClaim;
  if (settings.clockToleranceSeconds !== undefined) {
    environment[tokenSettingsEnv.clockToleranceSeconds] = String(settings.clockToleranceSeconds);
  }
  return environment;
}

export { tableItemActions };

/**
 * What a function may do to the tables:
 * - `none`: nothing (the authorizer verifies a JWT and reads no table);
 * - `items`: exactly {@link tableItemActions} on the three tables.
 */
type TableAccess = 'none' | 'items';

export interface FunctionSettings {
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  readonly tableAccess: TableAccess;
  /** Sends to the scheduler's delay queue. */
  readonly schedules: boolean;
  /** What it does to the per-subscription queues (see {@link SubscriptionQueueAccess}). */
  readonly subscriptionQueues: SubscriptionQueueAccess;
  /** Reads the token secret; gets none of the table and queue configuration. */
  readonly readsTokenSecret: boolean;
}

/**
 * Grants follow what each function calls today. The admin and data APIs use
 * the tables only: the queue side of subscribe, publish and receive arrives
 * with the data plane, and with it their queue grants. The scheduler's timeout
 * stays at a sixth of its queue's visibility timeout, as AWS advises for SQS
 * event sources.
 */
export const functionSettings: Record<FunctionName, FunctionSettings> = {
  'admin-api': {
    memorySizeMb: 1024,
    timeoutSeconds: 29,
    tableAccess: 'items',
    // Subscriptions and consumers create queues, publishing sends tokens, receiving reads them,
    // nack and delayed delivery schedule redeliveries.
    schedules: true,
    subscriptionQueues: 'deliver',
    readsTokenSecret: false,
  },
  'data-api': {
    memorySizeMb: 1024,
    timeoutSeconds: 29,
    tableAccess: 'items',
    // Subscriptions and consumers create queues, publishing sends tokens, receiving reads them,
    // nack and delayed delivery schedule redeliveries.
    schedules: true,
    subscriptionQueues: 'deliver',
    readsTokenSecret: false,
  },
  authorizer: {
    memorySizeMb: 512,
    timeoutSeconds: 10,
    tableAccess: 'none',
    schedules: false,
    subscriptionQueues: 'none',
    readsTokenSecret: true,
  },
  scheduler: {
    memorySizeMb: 512,
    timeoutSeconds: SCHEDULER_TIMEOUT_SECONDS,
    tableAccess: 'items',
    // Its event source runs at most SCHEDULER_MAX_CONCURRENCY invocations at once; no reserved
    // concurrency unless the deployment asks for it (ackline:reservedConcurrency).
    schedules: true,
    subscriptionQueues: 'deliver',
    readsTokenSecret: false,
  },
  maintenance: {
    memorySizeMb: 512,
    timeoutSeconds: MAINTENANCE_TIMEOUT_SECONDS,
    tableAccess: 'items',
    // Its timeout is shorter than its schedule's interval, so runs do not pile up without a
    // reserved concurrency of 1 (ackline:reservedConcurrency gives it one).
    // It counts the tokens in each subscription's dead-letter queue, rings doorbells (due
    // redeliveries nobody took), schedules the second release pass of a lapsed consumer and the
    // next step of a deletion job it resumed, and deletes a deleted subscription's queues.
    schedules: true,
    subscriptionQueues: 'maintain',
    readsTokenSecret: false,
  },
};

/**
 * What the control plane and the delivery path do to the queues they create at run time
 * (`sqs:TagQueue`: CreateQueue with tags needs it besides `sqs:CreateQueue`).
 */
export const subscriptionQueueActions = [
  'sqs:CreateQueue',
  'sqs:TagQueue',
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
 * What maintenance does to those queues: it reads the attributes of each
 * subscription's dead-letter queue (the tokens SQS moved there). By the names
 * it derives from the catalog's subscriptions, so it needs no `sqs:ListQueues`,
 * which IAM cannot limit to the stage's queue-name prefix.
 */
export const subscriptionQueueInspectActions = ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes'];

/**
 * What maintenance does to those queues: inspect them, ring a doorbell
 * (SendMessage), and delete the queues of a subscription whose deletion job it
 * resumes. It never receives or creates.
 */
export const subscriptionQueueMaintainActions = [
  ...subscriptionQueueInspectActions,
  'sqs:SendMessage',
  'sqs:DeleteQueue',
];

/**
 * What a function may do to the per-subscription queues created at run time,
 * on the stage's queue-name prefix only:
 * - `none`: nothing;
 * - `deliver`: {@link subscriptionQueueActions} (create, feed, drain, delete);
 * - `inspect`: {@link subscriptionQueueInspectActions} (read their attributes);
 * - `maintain`: {@link subscriptionQueueMaintainActions} (inspect, ring, delete).
 */
type SubscriptionQueueAccess = 'none' | 'deliver' | 'inspect' | 'maintain';

/** The least maximum concurrency an SQS event source takes (Lambda's ScalingConfig). */
export const MIN_EVENT_SOURCE_CONCURRENCY = 2;

/**
 * The scheduler event source's maximum concurrency: the props' (default SCHEDULER_MAX_CONCURRENCY),
 * and never more than a reserved concurrency the scheduler has, which would throttle the rest
 * (Lambda's event source does not see the reservation).
 */
export function schedulerMaxConcurrency(
  props: Pick<StatelessStackProps, 'reservedConcurrency' | 'schedulerMaxConcurrency'>,
): number {
  const wanted = props.schedulerMaxConcurrency ?? SCHEDULER_MAX_CONCURRENCY;
  const reserved = props.reservedConcurrency?.scheduler;
  if (!Number.isSafeInteger(wanted) || wanted < MIN_EVENT_SOURCE_CONCURRENCY || wanted > 1000) {
    throw new Error(`the scheduler's maximum concurrency must be an integer from 2 to 1000, got ${wanted}`);
  }
  if (reserved === undefined || reserved === 0) return wanted;
  if (reserved < MIN_EVENT_SOURCE_CONCURRENCY) {
    throw new Error(
      `the scheduler's reserved concurrency must be 0 (none) or at least ${MIN_EVENT_SOURCE_CONCURRENCY}, ` +
        `the least its SQS event source runs at once, got ${reserved}: the event source would take ` +
        'batches the reservation throttles',
    );
  }
  return Math.min(wanted, reserved);
}

/**
 * The functions' environments: the token secret's reader (the authorizer) gets the stage, the
 * superuser roles and its token settings; every other function the table and queue configuration.
 */
function functionEnvironments(
  props: StatelessStackProps,
  prefix: string,
): { readonly tokenSecret: Record<string, string>; readonly data: Record<string, string> } {
  const common: Record<string, string> = { ACKLINE_STAGE: props.stage };
  if (props.superuserRoles !== undefined) common.ACKLINE_SUPERUSER_ROLES = props.superuserRoles;
  const dataEnvironment: Record<string, string> = {
    ...common,
    ACKLINE_QUEUE_PREFIX: prefix,
    [schedulerQueueDefinition.envVar]: props.schedulerQueue.queueUrl,
  };
  for (const { definition, table } of props.tables) dataEnvironment[definition.envVar] = table.tableName;
  if (props.maxEntriesPerLedger !== undefined) {
    dataEnvironment.ACKLINE_MAX_ENTRIES_PER_LEDGER = String(props.maxEntriesPerLedger);
  }
  if (props.auditRetentionDays !== undefined) {
    dataEnvironment.ACKLINE_AUDIT_RETENTION_DAYS = String(props.auditRetentionDays);
  }
  if (props.defaultRetention !== undefined) {
    const { retentionTimeInMinutes, retentionSizeInMB } = props.defaultRetention;
    dataEnvironment.ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES = String(retentionTimeInMinutes);
    dataEnvironment.ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB = String(retentionSizeInMB);
  }
  if (props.maxUnackedPerConsumer !== undefined) {
    dataEnvironment.ACKLINE_MAX_UNACKED_PER_CONSUMER = String(props.maxUnackedPerConsumer);
  }
  if (props.maxUnackedPerSubscription !== undefined) {
    dataEnvironment.ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION = String(props.maxUnackedPerSubscription);
  }
  return {
    tokenSecret: { ...common, ...tokenSettingsEnvironment(props.tokenSettings) },
    data: dataEnvironment,
  };
}

/**
 * Everything that can be replaced at will: the functions, the REST API, their
 * wiring to the stateful stack's tables, queues and token secret, and the
 * alarms and dashboard.
 */
export class StatelessStack extends Stack {
  public readonly functions: Readonly<Record<FunctionName, NodejsFunction>>;
  public readonly api: RestApi;
  public readonly observability: Observability;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const prefix = queuePrefix(props.stage);
    const environments = functionEnvironments(props, prefix);

    // Queues created at run time are named `<prefix><...>`; the scheduler queue
    // has a CloudFormation-generated name outside that prefix.
    const subscriptionQueuesArn = Stack.of(this).formatArn({
      service: 'sqs',
      resource: `${prefix}*`,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });

    const functions = {} as Record<FunctionName, NodejsFunction>;
    for (const name of functionNames) {
      functions[name] = this.lambdaFunction(name, props, {
        environment: functionSettings[name].readsTokenSecret ? environments.tokenSecret : environments.data,
        subscriptionQueues: { prefix, arn: subscriptionQueuesArn },
      });
    }
    this.functions = functions;

    functions.scheduler.addEventSource(
      new SqsEventSource(props.schedulerQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: schedulerMaxConcurrency(props),
      }),
    );
    new Rule(this, 'MaintenanceSchedule', {
      schedule: Schedule.rate(MAINTENANCE_INTERVAL),
      targets: [new LambdaFunction(functions.maintenance)],
    });
    // A run that fails or is throttled is not retried: the next scheduled run, a minute later, does
    // the same work (a retry would only overlap it). Lambda keeps a throttled event for at most one
    // interval instead of six hours.
    functions.maintenance.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: MAINTENANCE_INTERVAL });

    this.api = this.restApi(props, functions);
    this.observability = new Observability(this, 'Observability', {
      stage: props.stage,
      api: this.api,
      functions,
      schedulerQueue: props.schedulerQueue,
      schedulerDeadLetterQueue: props.schedulerDeadLetterQueue,
      tables: props.tables.map(({ definition, table }) => ({ logicalName: definition.logicalName, table })),
      ...(props.alarmTopicArn === undefined ? {} : { alarmTopicArn: props.alarmTopicArn }),
    });
  }

  /**
   * One function with the grants its {@link functionSettings} name: the reserved concurrency the
   * props ask for (none by default), the tables, the scheduler queue, the subscription queues (on the stage's queue-name prefix), the
   * token secret.
   */
  private lambdaFunction(
    name: FunctionName,
    props: StatelessStackProps,
    wiring: {
      readonly environment: Record<string, string>;
      readonly subscriptionQueues: { readonly prefix: string; readonly arn: string };
    },
  ): NodejsFunction {
    const setting = functionSettings[name];
    const construct = new AcklineFunction(this, pascal(name), {
      name,
      environment: { ...wiring.environment },
      logRetention: props.logRetention,
      memorySizeMb: setting.memorySizeMb,
      timeout: Duration.seconds(setting.timeoutSeconds),
    });
    const fn = construct.function;
    const reserved = props.reservedConcurrency?.[name];
    if (reserved !== undefined && reserved > 0) {
      (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = reserved;
    }
    for (const { table } of props.tables) {
      if (setting.tableAccess === 'items') table.grant(fn, ...tableItemActions);
    }
    if (setting.schedules) props.schedulerQueue.grantSendMessages(fn);
    if (setting.subscriptionQueues !== 'none') {
      const { prefix, arn } = wiring.subscriptionQueues;
      const actions = {
        deliver: subscriptionQueueActions,
        inspect: subscriptionQueueInspectActions,
        maintain: subscriptionQueueMaintainActions,
      }[setting.subscriptionQueues];
      fn.addToRolePolicy(new PolicyStatement({ actions, resources: [arn] }));
      NagSuppressions.addResourceSuppressions(
        construct.role,
        [
          {
            id: 'AwsSolutions-IAM5',
            reason:
              'Subscription queues are created at run time, one per subscription, so their names are ' +
              `unknown at deploy time; the resource is this stage's queue-name prefix ${prefix}*, ` +
              "which holds this deployment's queues only.",
            appliesTo: [`Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${prefix}*`],
          },
        ],
        true,
      );
    }
    if (setting.readsTokenSecret) {
      for (const [key, value] of Object.entries(grantTokenSecretRead(construct, fn, props.tokenSecret))) {
        fn.addEnvironment(key, value);
      }
    }
    NagSuppressions.addResourceSuppressions(fn, [
      {
        id: 'AwsSolutions-L1',
        reason:
          'nodejs22.x is pinned on purpose: it is the runtime ackline is built and tested for ' +
          '(ARCHITECTURE.md; esbuild target node22). A newer Node family is adopted by changing ' +
          'runtime and target together once the test suites pass on it, not when Lambda releases it.',
      },
    ]);
    return fn;
  }

  /**
   * The REST API: `ANY /<segment>/{proxy+}` per route of api-routes.ts behind
   * the REQUEST authorizer, the public paths without it, gateway responses in
   * ackline's `{ "reason": ... }` shape (as the local gateway answers), JSON
   * access logs and ERROR execution logs.
   */
  private restApi(props: StatelessStackProps, functions: Record<FunctionName, NodejsFunction>): RestApi {
    const api = this.loggedRestApi(props);
    suppressRestApiFindings(api, props.apiGatewayCloudWatchRole);
    addGatewayResponses(api);

    // API Gateway caches the authorizer's answer (policy and context) per
    // Authorization header value and applies it to every path and method of
    // the API for the TTL. Sound because the authorizer only authenticates (the
    // token alone decides its answer) and allows the whole API, while every
    // handler route authorizes the role itself (requireAction/requireSuperuser,
    // proved route by route by test/integration/auth-matrix.test.ts). A token
    // that expires within the TTL is refused by the handlers
    // (requireCurrentCredentials), as is a token the authorizer refused (its
    // answer carries the failed check); a request without the header is
    // refused with 401 by API Gateway itself, without invoking the authorizer.
    const authorizer = new RequestAuthorizer(this, 'TokenAuthorizer', {
      handler: functions.authorizer,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_RESULT_TTL_SECONDS),
    });
    addApiMethods(api, authorizer, functions);
    return api;
  }

  /**
   * The REST API and its stage: JSON access logs to a log group of its own, ERROR execution logs
   * to the group API Gateway writes them to, `API-Gateway-Execution-Logs_<restApiId>/<stage>`
   * (https://docs.aws.amazon.com/apigateway/latest/developerguide/rest-api-execution-logging.html).
   * API Gateway creates that group itself, with no retention (logs kept forever) and outside any
   * stack (left behind by `cdk destroy`), unless it exists: so the stack creates it first, with the
   * functions' retention, and the stage depends on it.
   */
  private loggedRestApi(props: StatelessStackProps): RestApi {
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const api = this.restApiWithAccessLogs(props, accessLogs);
    const executionLogs = new LogGroup(this, 'ApiExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${props.stage}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    api.deploymentStage.node.addDependency(executionLogs);
    return api;
  }

  private restApiWithAccessLogs(props: StatelessStackProps, accessLogs: LogGroup): RestApi {
    return new RestApi(this, 'Api', {
      restApiName: `ackline-${props.stage}`,
      description: `ackline ${props.stage}: Pulsar admin and data REST paths`,
      cloudWatchRole: props.apiGatewayCloudWatchRole,
      // Other APIs of the account log through the same account setting: the
      // role outlives this stack rather than leave the setting dangling.
      ...(props.apiGatewayCloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stage,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            ip: AccessLogField.contextIdentitySourceIp(),
            httpMethod: AccessLogField.contextHttpMethod(),
            path: AccessLogField.contextPath(),
            resourcePath: AccessLogField.contextResourcePath(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatencyMs: AccessLogField.contextResponseLatency(),
            integrationLatencyMs: AccessLogField.contextIntegrationLatency(),
            role: AccessLogField.contextAuthorizerPrincipalId(),
            error: AccessLogField.contextErrorMessage(),
          }),
        ),
        // Errors only, and never request or response bodies: they carry bearer tokens and payloads.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    });
  }
}

/** cdk-nag's findings on the API that are so on purpose, and why. */
function suppressRestApiFindings(api: RestApi, apiGatewayCloudWatchRole: boolean): void {
  if (apiGatewayCloudWatchRole) {
    NagSuppressions.addResourceSuppressions(
      api,
      [
        {
          id: 'AwsSolutions-IAM4',
          reason:
            "AmazonAPIGatewayPushToCloudWatchLogs is AWS's policy for API Gateway's account-level logging " +
            'role: API Gateway writes the logs of every API of the account and region through it, so it ' +
            "cannot be scoped to this API's log groups.",
          appliesTo: [
            'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
          ],
        },
      ],
      true,
    );
  }
  NagSuppressions.addResourceSuppressions(api, [
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'Lambda proxy integration on ANY /{proxy+}: each route validates its own input and answers ' +
        'Pulsar\'s { "reason": ... } body with the status of shared/http/http-error-status.ts; a gateway ' +
        'request validator has no model to check there and would answer in another shape.',
    },
  ]);
  NagSuppressions.addResourceSuppressions(api.deploymentStage, [
    {
      id: 'AwsSolutions-APIG3',
      reason:
        'No WAFv2 web ACL by default: every path but the health probe needs a valid bearer token, ' +
        'and a web ACL is billed per month and per request. Associate one with the stage where the API ' +
        'faces untrusted traffic at volume.',
    },
  ]);
}

/** API Gateway's own answers in ackline's `{ "reason": ... }` shape (gatewayResponses of api-routes.ts). */
function addGatewayResponses(api: RestApi): void {
  const body = (reason: string) => ({ 'application/json': JSON.stringify({ reason }) });
  const responses = [
    { id: 'Unauthorized', type: ResponseType.UNAUTHORIZED, answer: gatewayResponses.unauthorized },
    { id: 'AccessDenied', type: ResponseType.ACCESS_DENIED, answer: gatewayResponses.accessDenied },
    {
      id: 'AuthorizerFailure',
      type: ResponseType.AUTHORIZER_FAILURE,
      answer: gatewayResponses.authorizerFailure,
    },
    // What API Gateway answers (403 by default) for a path or method it has no resource for.
    {
      id: 'MissingRoute',
      type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
      answer: gatewayResponses.missingRoute,
    },
    {
      id: 'PayloadTooLarge',
      type: ResponseType.REQUEST_TOO_LARGE,
      answer: gatewayResponses.payloadTooLarge,
    },
    {
      id: 'IntegrationTimeout',
      type: ResponseType.INTEGRATION_TIMEOUT,
      answer: gatewayResponses.integrationTimeout,
    },
  ];
  for (const { id, type, answer } of responses) {
    api.addGatewayResponse(id, {
      type,
      statusCode: String(answer.statusCode),
      templates: body(answer.reason),
    });
  }
}

/**
 * `ANY /<segment>/{proxy+}` per route of api-routes.ts behind the authorizer, and the public paths
 * without it; one Lambda integration per function.
 */
function addApiMethods(
  api: RestApi,
  authorizer: RequestAuthorizer,
  functions: Record<FunctionName, NodejsFunction>,
): void {
  const integrations = new Map<FunctionName, LambdaIntegration>();
  const integrationFor = (name: FunctionName): LambdaIntegration => {
    let integration = integrations.get(name);
    if (integration === undefined) {
      integration = new LambdaIntegration(functions[name], { proxy: true });
      integrations.set(name, integration);
    }
    return integration;
  };

  const cognitoReason =
    'ackline authenticates with Pulsar-style bearer tokens (HS256, RS256, ES256) verified by its own Lambda REQUEST ' +
    'authorizer (functions/authorizer), not with Cognito user pools.';
  for (const route of apiRoutes) {
    const method = api.root
      .resourceForPath(route.firstSegment)
      .addResource('{proxy+}')
      .addMethod('ANY', integrationFor(route.functionName), {
        authorizationType: AuthorizationType.CUSTOM,
        authorizer,
      });
    NagSuppressions.addResourceSuppressions(method, [{ id: 'AwsSolutions-COG4', reason: cognitoReason }]);
  }
  // A public path is an explicit resource: API Gateway prefers it to the
  // sibling {proxy+} for its method only; every other method still goes
  // through the authorizer.
  for (const { method: httpMethod, path } of publicPaths) {
    const firstSegment = path.split('/')[1];
    const route = apiRoutes.find((candidate) => candidate.firstSegment === firstSegment);
    if (route === undefined) throw new Error(`public path ${path} is under no route of apiRoutes`);
    const method = api.root.resourceForPath(path).addMethod(httpMethod, integrationFor(route.functionName), {
      authorizationType: AuthorizationType.NONE,
    });
    const publicReason =
      `${httpMethod} ${path} is public on purpose (api-routes.ts publicPaths): a liveness probe for ` +
      'load balancers and uptime checks, which have no token; it answers a constant and reads no data.';
    NagSuppressions.addResourceSuppressions(method, [
      { id: 'AwsSolutions-APIG4', reason: publicReason },
      { id: 'AwsSolutions-COG4', reason: publicReason },
    ]);
  }
}
