import { ArnFormat, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type IQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { CURSOR_ID_ATTRIBUTE, subscriptionItemKey } from '../../shared/config/catalog-keys.ts';
import {
  catalogTable,
  cursorsTable,
  queuePrefix,
  schedulerQueue as schedulerQueueDefinition,
  subscriptionQueueTemplate,
  type TableDefinition,
  tables as tableDefinitions,
  validStageName,
} from '../../shared/config/resources.ts';
import {
  CONSUMER_NAME_ENV,
  SUBSCRIPTION_ENV,
  TARGET_FUNCTION_ENV,
  TARGET_TIMEOUT_MS_ENV,
  TOPIC_ENV,
} from '../../shared/lambda/consumer-env.ts';
import { consumerRunnerAssetDirectory } from './consumer-runner-asset.ts';
import { type DeploymentExport, deploymentExportName } from './deployment-exports.ts';
import { addNagSuppressions } from './nag-suppressions.ts';
import { tableItemActions } from './table-item-actions.ts';

/** What the delivery path does to the queues of the deployment besides consuming its own: send tokens. */
export const consumerSendActions = ['sqs:GetQueueUrl', 'sqs:SendMessage'] as const;

/** The adapters' item actions but Scan, which only the queue rebuild calls. */
export const consumerTableActions = tableItemActions.filter((action) => action !== 'dynamodb:Scan');

/** The resources of an ackline deployment a consumer uses, when they are at hand in the same app. */
export interface AcklineDeploymentResources {
  /** The deployment's tables with their definitions: StatefulStack's `tables`. */
  readonly tables: readonly { readonly definition: TableDefinition; readonly table: ITable }[];
  /** The deployment's scheduler queue (StatefulStack's `schedulerQueue`): nack backoffs past SQS's delays. */
  readonly schedulerQueue: IQueue;
}

/**
 * The props of {@link AcklineSubscriptionConsumer}: the function, and the subscription by the
 * names a user knows (stage, topic, subscription).
 *
 * @example
 * const props: AcklineSubscriptionConsumerProps = {
 *   function: billingFunction,
 *   stage: 'prod',
 *   topic: 'persistent://public/default/orders',
 *   subscription: 'billing',
 * };
 */
export interface AcklineSubscriptionConsumerProps {
  /**
   * A function whose handler `acklineConsumer()` (@ackline/lambda) built. The construct gives it
   * no permission and no environment: only the runner invokes it. Its timeout is the consumer's
   * ack timeout: at most 25 s.
   */
  readonly function: LambdaFunction;
  /** The stage of the ackline deployment (`ackline:stage`, `dev` by default): names its queues and exports. */
  readonly stage: string;
  /**
   * The topic, as subscribed: `persistent://tenant/namespace/name` (a partitioned topic by its own
   * name, not a `-partition-i`).
   */
  readonly topic: string;
  /**
   * The subscription. Subscribe the function's consumer first, as an event-driven consumer
   * (`consumerKind: "lambda"`): that creates the subscription, whose queues this construct finds
   * at deploy time, and records the consumer's policy (nack backoff, dead-letter policy).
   */
  readonly subscription: string;
  /** The topic's partitions (0, the default, for a topic that is not partitioned): one runner event source each. */
  readonly partitions?: number;
  /**
   * The `consumerName` the function's consumer subscribed with; needed only when the subscription
   * has more than one event-driven consumer.
   */
  readonly consumerName?: string;
  /**
   * The deployment's tables and scheduler queue. Default: imported by stage from the exports of
   * the deployment's stateful stack (`ackline-<stage>-CatalogTableArn`, ...), so the function may
   * live in another app of the same account and region.
   */
  readonly deployment?: AcklineDeploymentResources;
  /** Records per runner invocation (1..10; up to 10,000 with a batching window). Default 10. */
  readonly batchSize?: number;
  /** How long to gather records before invoking the runner. */
  readonly maxBatchingWindow?: Duration;
  /**
   * The most concurrent runner invocations each event source (one per partition) makes (2..1000):
   * the event source takes no batch beyond it, where a reserved concurrency would let it take
   * batches and have them throttled. Default DEFAULT_RUNNER_MAX_CONCURRENCY (5); an ordered
   * subscription's is ORDERED_RUNNER_MAX_CONCURRENCY (2) and cannot be set.
   */
  readonly maxConcurrency?: number;
  /**
   * The subscription keeps an order (Exclusive, Failover, Key_Shared): the runner gets a reserved
   * concurrency of 1, so one invocation at a time takes the subscription's messages in order and
   * hands them to the function (the subscription's queues are standard queues: the event source
   * alone would run several at once), and its event sources the least maximum concurrency Lambda
   * takes, 2. The reservation comes out of the account's concurrency, which must keep 100
   * unreserved: an account whose limit is under 101 refuses the deploy.
   */
  readonly ordered?: boolean;
}

const TOPIC_PATTERN = /^persistent:\/\/[^/\s]+\/[^/\s]+\/[^/\s]+$/;

/**
 * The runner's timeout. The subscription queues' visibility timeout (180 s) is at least six times
 * it, as AWS advises for an SQS event source: a batch throttled while another runs comes back
 * after the visibility timeout, so it needs room for Lambda's retries of it.
 */
export const RUNNER_TIMEOUT_SECONDS = 29;
/** The runner event sources' maximum concurrency, unless `maxConcurrency` says otherwise. */
export const DEFAULT_RUNNER_MAX_CONCURRENCY = 5;
/**
 * An ordered subscription's event sources' maximum concurrency: the least Lambda takes. Its runner's
 * reserved concurrency of 1 still decides that one batch at a time runs; the event source's second
 * batch is throttled and comes back after the visibility timeout (a doorbell ring: the running
 * invocation takes what it rang for).
 */
export const ORDERED_RUNNER_MAX_CONCURRENCY = 2;
/**
 * The longest timeout the user's function may have: the runner hands a batch over only while the
 * function's whole timeout, and 4 s to acknowledge, fit before the runner's own end.
 */
export const MAX_FUNCTION_TIMEOUT_SECONDS = RUNNER_TIMEOUT_SECONDS - 4;

/**
 * Wires a Lambda function to an ackline subscription, named by topic and subscription, as an
 * event-driven consumer, with least privilege: the user's function may do nothing in ackline's
 * tables and queues. Between the two stands the subscription's **runner**, ackline's code with
 * its own role:
 * - at deploy time, the construct reads the subscription's cursor id from the Catalog table (one
 *   `GetItem` per partition, through a CDK AwsCustomResource) and so finds its queues,
 *   `ackline-<stage>--s-<cursorId>`; the deploy fails if the subscription does not exist yet;
 * - the runner (a prebuilt bundle shipped in this package; nodejs22.x, arm64) has an SQS event
 *   source with partial batch failures on each of them; it dispatches the subscription's
 *   messages to the function's consumer and invokes the function synchronously with each batch,
 *   then acknowledges what succeeded and negatively acknowledges what failed;
 * - the runner's role: consume the subscription's queues; the DynamoDB item actions ackline's
 *   adapters call (on the Cursors table only the items of its own cursors, a
 *   `dynamodb:LeadingKeys` condition; on Catalog and Entries the whole table: its topic's
 *   ledgers roll over and a dead-letter topic's keys exist only at run time); send to the
 *   scheduler queue and to the deployment's queues, `ackline-<stage>--*` (redeliveries, dead
 *   letters); invoke the function, nothing else; and its own log group;
 * - the user's function gets nothing: no table, queue or environment.
 *
 * The function's timeout is the consumer's ack timeout, at most 25 s (the runner's 29 s, a sixth of
 * the subscription queues' visibility timeout of 180 s or less, less 4 s to acknowledge).
 *
 * @example
 * // subscribed first: POST /consumers/persistent/public/default/orders/subscription/billing
 * //   {"subscriptionType":"Shared","consumerKind":"lambda","functionTimeoutMs":20000,
 * //    "deadLetterPolicy":{"maxRedeliverCount":5}}
 * new AcklineSubscriptionConsumer(this, 'Billing', {
 *   function: billingFunction, // handler: acklineConsumer({ process: async (message) => { ... } })
 *   stage: 'prod',
 *   topic: 'persistent://public/default/orders',
 *   subscription: 'billing',
 * });
 */
export class AcklineSubscriptionConsumer extends Construct {
  /** The subscription's queues, one per partition (their names resolve at deploy time). */
  public readonly queues: readonly IQueue[];
  /** The runner's event sources, one per queue. */
  public readonly eventSources: readonly SqsEventSource[];
  /** The subscription's runner: ackline's function that invokes yours. */
  public readonly runner: LambdaFunction;

  constructor(scope: Construct, id: string, props: AcklineSubscriptionConsumerProps) {
    super(scope, id);
    const fn = props.function;
    const prefix = queuePrefix(validStageName(props.stage));
    const partitions = props.partitions ?? 0;
    validateProps(props, partitions);
    const deployment = props.deployment ?? this.importDeployment(props.stage);
    const catalog = deployment.tables.find(({ definition }) => definition.envVar === catalogTable.envVar);
    if (catalog === undefined) throw new Error('AcklineSubscriptionConsumer needs the Catalog table');

    const stack = Stack.of(this);
    const partitionNames =
      partitions === 0
        ? [props.topic]
        : Array.from({ length: partitions }, (_, i) => `${props.topic}-partition-${i}`);
    const cursorIds: string[] = [];
    this.queues = partitionNames.map((partition, index) => {
      const cursorId = this.cursorIdOf(catalog.table, partition, props.subscription, index);
      cursorIds.push(cursorId);
      const queueName = Fn.join('', [`${prefix}s-`, cursorId]);
      return Queue.fromQueueAttributes(this, `Queue${index}`, {
        queueArn: stack.formatArn({
          service: 'sqs',
          resource: queueName,
          arnFormat: ArnFormat.NO_RESOURCE_NAME,
        }),
        queueName,
        fifo: false,
      });
    });

    const runner = this.createRunner(props, deployment);
    this.runner = runner;
    this.eventSources = this.queues.map(
      (queue) =>
        new SqsEventSource(queue, {
          reportBatchItemFailures: true,
          batchSize: props.batchSize ?? 10,
          ...(props.maxBatchingWindow === undefined ? {} : { maxBatchingWindow: props.maxBatchingWindow }),
          maxConcurrency: runnerMaxConcurrency(props),
        }),
    );
    for (const source of this.eventSources) runner.addEventSource(source);

    for (const { definition, table } of deployment.tables) {
      if (definition.logicalName === cursorsTable.logicalName) {
        // Every Cursors item's partition key is its cursor's id: the runner may touch the items
        // of its subscription's cursors only (the ids the lookups found at deploy time).
        runner.addToRolePolicy(
          new PolicyStatement({
            actions: [...consumerTableActions],
            resources: [table.tableArn],
            conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': cursorIds } },
          }),
        );
      } else {
        // Catalog and Entries: its consumer record, its topic's ledgers (they roll over at run
        // time), a dead-letter topic's ledgers and subscriptions: keys unknown at deploy time.
        // ackline's code holds this grant, not the user's function.
        table.grant(runner, ...consumerTableActions);
      }
    }
    deployment.schedulerQueue.grantSendMessages(runner);
    const deploymentQueuesArn = stack.formatArn({
      service: 'sqs',
      resource: `${prefix}*`,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });
    runner.addToRolePolicy(
      new PolicyStatement({ actions: [...consumerSendActions], resources: [deploymentQueuesArn] }),
    );
    // The function itself, unqualified (not fn.grantInvoke's `<arn>:*`, which adds every version and alias).
    runner.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
    );
    addNagSuppressions(runner.role ?? runner, [
      {
        id: 'AwsSolutions-IAM5',
        reason:
          'Redelivery tokens and dead letters are sent to subscription queues created at run time, ' +
          `whose names are unknown at deploy time; the resource is the stage's queue-name prefix ${prefix}*, ` +
          "which holds this ackline deployment's queues only.",
        appliesTo: [`Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${prefix}*`],
      },
    ]);
    addNagSuppressions(runner, [
      {
        id: 'AwsSolutions-L1',
        reason:
          'The runner is pinned to nodejs22.x on purpose: its bundle is built and tested for it (esbuild ' +
          "target node22), as ackline's own functions are; a newer Node family is adopted with the bundle.",
      },
    ]);
  }

  /** The runner: the prebuilt bundle, its own log group and role, the environment it configures itself from. */
  private createRunner(
    props: AcklineSubscriptionConsumerProps,
    deployment: AcklineDeploymentResources,
  ): LambdaFunction {
    const logGroup = new LogGroup(this, 'RunnerLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(this, 'RunnerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `ackline subscription runner of ${props.subscription} on ${props.topic}`,
    });
    // logs:CreateLogStream and logs:PutLogEvents on this log group only (no AWSLambdaBasicExecutionRole).
    logGroup.grantWrite(role);
    const environment: Record<string, string> = {
      NODE_OPTIONS: '--enable-source-maps',
      ACKLINE_STAGE: props.stage,
      [subscriptionQueueTemplate.envVar]: queuePrefix(props.stage),
      [schedulerQueueDefinition.envVar]: deployment.schedulerQueue.queueUrl,
      [TOPIC_ENV]: props.topic,
      [SUBSCRIPTION_ENV]: props.subscription,
      ...(props.consumerName === undefined ? {} : { [CONSUMER_NAME_ENV]: props.consumerName }),
      [TARGET_FUNCTION_ENV]: props.function.functionArn,
      [TARGET_TIMEOUT_MS_ENV]: String(functionTimeoutSeconds(props.function) * 1000),
    };
    for (const { definition, table } of deployment.tables) environment[definition.envVar] = table.tableName;
    return new LambdaFunction(this, 'Runner', {
      description: `ackline: dispatches ${props.subscription} on ${props.topic} to ${props.function.node.path}`,
      code: Code.fromAsset(consumerRunnerAssetDirectory()),
      handler: 'index.handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(RUNNER_TIMEOUT_SECONDS),
      role,
      logGroup,
      environment,
      ...(props.ordered ? { reservedConcurrentExecutions: 1 } : {}),
    });
  }

  /** The deployment's tables and scheduler queue, from the stateful stack's exports. */
  private importDeployment(stage: string): AcklineDeploymentResources {
    const imported = (what: DeploymentExport) => Fn.importValue(deploymentExportName(stage, what));
    return {
      tables: tableDefinitions.map((definition) => ({
        definition,
        table: Table.fromTableArn(
          this,
          `${definition.logicalName}Table`,
          imported(`${definition.logicalName}TableArn` as DeploymentExport),
        ),
      })),
      schedulerQueue: Queue.fromQueueAttributes(this, 'SchedulerQueue', {
        queueArn: imported('SchedulerQueueArn'),
        queueUrl: imported('SchedulerQueueUrl'),
      }),
    };
  }

  /**
   * The cursor id of the subscription on one partition, read from the Catalog table at deploy time
   * (a strongly consistent GetItem, on create and whenever the topic or subscription changes).
   */
  private cursorIdOf(catalog: ITable, partition: string, subscription: string, index: number): string {
    const key = subscriptionItemKey(partition, subscription);
    const lookup = new AwsCustomResource(this, `Subscription${index}`, {
      onUpdate: {
        service: 'DynamoDB',
        action: 'GetItem',
        parameters: {
          TableName: catalog.tableName,
          Key: { pk: { S: key.pk }, sk: { S: key.sk } },
          ConsistentRead: true,
          ProjectionExpression: CURSOR_ID_ATTRIBUTE,
        },
        physicalResourceId: PhysicalResourceId.of(`${partition} ${subscription}`),
        outputPaths: [`Item.${CURSOR_ID_ATTRIBUTE}.S`],
      },
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [catalog.tableArn] }),
      ]),
      installLatestAwsSdk: false,
    });
    const provider = Stack.of(this).node.tryFindChild(
      `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`,
    );
    if (provider !== undefined)
      addNagSuppressions(provider, [
        {
          id: 'AwsSolutions-IAM4',
          reason:
            "CDK's AwsCustomResource provider (the subscription lookup) logs through AWSLambdaBasicExecutionRole.",
        },
        { id: 'AwsSolutions-L1', reason: "CDK's AwsCustomResource provider pins its own runtime." },
      ]);
    return lookup.getResponseField(`Item.${CURSOR_ID_ATTRIBUTE}.S`);
  }
}

function validateProps(props: AcklineSubscriptionConsumerProps, partitions: number): void {
  if (!TOPIC_PATTERN.test(props.topic) || (partitions > 0 && /-partition-\d+$/.test(props.topic))) {
    throw new Error(
      `topic ${props.topic} is not a persistent topic name (persistent://tenant/namespace/name; a partitioned topic by its own name)`,
    );
  }
  if (!Number.isInteger(partitions) || partitions < 0) {
    throw new Error(`partitions must be a non-negative integer, got ${partitions}`);
  }
  if (props.subscription.length === 0) throw new Error('subscription must not be empty');
  runnerMaxConcurrency(props);
  const fn = props.function;
  if (fn.timeout?.isUnresolved()) {
    throw new Error(
      `The timeout of ${fn.node.path} must be known at synth time (the runner plans its batches by it)`,
    );
  }
  const timeoutSeconds = functionTimeoutSeconds(fn);
  if (timeoutSeconds > MAX_FUNCTION_TIMEOUT_SECONDS) {
    throw new Error(
      `The timeout of ${fn.node.path} (${timeoutSeconds} s) must be at most ${MAX_FUNCTION_TIMEOUT_SECONDS} s: ` +
        `the runner (${RUNNER_TIMEOUT_SECONDS} s, a sixth of the subscription queues' visibility timeout of ` +
        `${subscriptionQueueTemplate.visibilityTimeoutSeconds} s or less) hands a batch over only while the ` +
        "function's whole timeout and 4 s to acknowledge fit in its own",
    );
  }
}

/** The runner event sources' maximum concurrency (see AcklineSubscriptionConsumerProps.maxConcurrency). */
function runnerMaxConcurrency(props: AcklineSubscriptionConsumerProps): number {
  const { maxConcurrency } = props;
  if (props.ordered) {
    if (maxConcurrency !== undefined && maxConcurrency !== ORDERED_RUNNER_MAX_CONCURRENCY) {
      throw new Error(
        `maxConcurrency cannot be set on an ordered subscription (got ${maxConcurrency}): its runner runs one ` +
          `batch at a time, and its event sources take ${ORDERED_RUNNER_MAX_CONCURRENCY}, the least Lambda allows`,
      );
    }
    return ORDERED_RUNNER_MAX_CONCURRENCY;
  }
  if (maxConcurrency === undefined) return DEFAULT_RUNNER_MAX_CONCURRENCY;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 2 || maxConcurrency > 1000) {
    throw new Error(`maxConcurrency must be an integer from 2 to 1000, got ${maxConcurrency}`);
  }
  return maxConcurrency;
}

/** The function's timeout: its setting, or Lambda's default, 3 s. */
function functionTimeoutSeconds(fn: LambdaFunction): number {
  return fn.timeout?.toSeconds() ?? 3;
}
