import { ArnFormat, type Duration, Stack, Token } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { type IQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import {
  cursorsTable,
  queuePrefix,
  schedulerQueue as schedulerQueueDefinition,
  subscriptionQueueTemplate,
  type TableDefinition,
} from '../../shared/config/resources.ts';
import { CONSUMER_ID_ENV } from '../../shared/lambda/consumer-env.ts';
import { tableItemActions } from '../stateless-stack.ts';

/** What the delivery path does to the queues of the deployment besides consuming its own: send tokens. */
export const consumerSendActions = ['sqs:GetQueueUrl', 'sqs:SendMessage'] as const;

/** The adapters' item actions but Scan, which only the queue rebuild calls. */
export const consumerTableActions = tableItemActions.filter((action) => action !== 'dynamodb:Scan');

export interface AcklineSubscriptionConsumerProps {
  /** A function whose handler `acklineConsumer()` (ackline/lambda) built. */
  readonly function: LambdaFunction;
  /** The stage of the ackline deployment (`ackline:stage`): names its queues `ackline-<stage>-...`. */
  readonly stage: string;
  /**
   * The subscription's doorbell queues, one per topic partition (one for a topic that is
   * not partitioned): `ackline-<stage>-s-<cursorId>` (standard queues for every type; formerly `.fifo` for an
   * Exclusive or Failover subscription. They exist once the subscription does.
   */
  readonly queueNames: readonly string[];
  /**
   * The consumer whose policy applies, set as `ACKLINE_CONSUMER_ID` on the
   * function; leave it out when the handler names its consumer itself.
   */
  readonly consumerId?: string;
  /** The deployment's tables with their definitions: StatefulStack's `tables`, or imported ones. */
  readonly tables: readonly { readonly definition: TableDefinition; readonly table: ITable }[];
  /** The deployment's scheduler queue (StatefulStack's `schedulerQueue`): nack backoffs past SQS's delays. */
  readonly schedulerQueue: IQueue;
  /** Records per invocation (1..10; up to 10,000 with a batching window on Shared and Key_Shared). Default 10. */
  readonly batchSize?: number;
  /** How long to gather records before invoking (standard queues only: not Exclusive or Failover). */
  readonly maxBatchingWindow?: Duration;
  /** The most concurrent invocations the event source makes (2..1000). Default: no limit. */
  readonly maxConcurrency?: number;
  /**
   * The subscription keeps an order (Exclusive, Failover, Key_Shared): the function gets a reserved
   * concurrency of 1, so one invocation at a time takes the subscription's messages in order (the
   * doorbell queues are standard queues: the event source alone would run several at once).
   */
  readonly ordered?: boolean;
}

/**
 * Wires a Lambda function to an ackline subscription as an event-driven
 * consumer: an SQS event source with partial batch failures on each of the
 * subscription's queues, the environment `acklineConsumer()` reads (tables,
 * queue prefix, scheduler queue, consumer id), and the grants it needs:
 * - consume the subscription's queues (the event source: receive, delete, change visibility);
 * - the DynamoDB item actions ackline's adapters call, on the three tables
 *   (consumer record, delivery check, acknowledgements, redelivery counts,
 *   dead-letter publishes);
 * - send to the scheduler queue (nack backoffs and delays longer than SQS carries);
 * - send to the deployment's queues, `ackline-<stage>-*`: redelivery tokens go
 *   back on the subscription's queue, and dead letters to the queues of the
 *   dead-letter topic's subscriptions, which exist only at run time.
 *
 * The function's timeout must stay under the subscription queues' visibility
 * timeout (30 s), or SQS would hand a record still being processed to another
 * invocation: it plays the role of the ack timeout.
 *
 * @example
 * new AcklineSubscriptionConsumer(this, 'Orders', {
 *   function: ordersFunction, // handler: acklineConsumer({ process: async (message) => { ... } })
 *   stage: 'prod',
 *   queueNames: ['ackline-prod-s-Xq3...'],
 *   consumerId: 'b7Vd...',
 *   tables: stateful.tables,
 *   schedulerQueue: stateful.schedulerQueue,
 * });
 */
export class AcklineSubscriptionConsumer extends Construct {
  public readonly queues: readonly IQueue[];
  public readonly eventSources: readonly SqsEventSource[];

  constructor(scope: Construct, id: string, props: AcklineSubscriptionConsumerProps) {
    super(scope, id);
    const fn = props.function;
    const prefix = queuePrefix(props.stage);
    if (props.queueNames.length === 0)
      throw new Error('AcklineSubscriptionConsumer needs at least one queue');
    const visibilitySeconds = subscriptionQueueTemplate.visibilityTimeoutSeconds;
    if (
      fn.timeout !== undefined &&
      !fn.timeout.isUnresolved() &&
      fn.timeout.toSeconds() >= visibilitySeconds
    ) {
      throw new Error(
        `The timeout of ${fn.node.path} (${fn.timeout.toSeconds()} s) must be shorter than the subscription ` +
          `queues' visibility timeout (${visibilitySeconds} s): SQS would hand a record still being processed to another invocation`,
      );
    }
    const stack = Stack.of(this);
    this.queues = props.queueNames.map((queueName, index) => {
      if (!Token.isUnresolved(queueName) && !queueName.startsWith(`${prefix}s-`)) {
        throw new Error(
          `${queueName} is not a subscription queue of stage ${props.stage} (${prefix}s-<cursorId>)`,
        );
      }
      return Queue.fromQueueAttributes(this, `Queue${index}`, {
        queueArn: stack.formatArn({
          service: 'sqs',
          resource: queueName,
          arnFormat: ArnFormat.NO_RESOURCE_NAME,
        }),
        queueName,
        fifo: queueName.endsWith('.fifo'),
      });
    });
    this.eventSources = this.queues.map(
      (queue) =>
        new SqsEventSource(queue, {
          reportBatchItemFailures: true,
          batchSize: props.batchSize ?? 10,
          ...(props.maxBatchingWindow === undefined ? {} : { maxBatchingWindow: props.maxBatchingWindow }),
          ...(props.maxConcurrency === undefined ? {} : { maxConcurrency: props.maxConcurrency }),
        }),
    );
    for (const source of this.eventSources) fn.addEventSource(source);
    if (props.ordered) {
      const cfn = fn.node.defaultChild as CfnFunction;
      cfn.reservedConcurrentExecutions = 1;
    }

    fn.addEnvironment('ACKLINE_STAGE', props.stage);
    fn.addEnvironment(subscriptionQueueTemplate.envVar, prefix);
    fn.addEnvironment(schedulerQueueDefinition.envVar, props.schedulerQueue.queueUrl);
    if (props.consumerId !== undefined) fn.addEnvironment(CONSUMER_ID_ENV, props.consumerId);
    // The subscription's cursors are known from its queue names (`<prefix>s-<cursorId>`): the
    // function may touch the items of those cursors only (every Cursors item's partition key is
    // its cursor's id). The Catalog and Entries keys it needs (its consumer record, the topic's
    // ledgers, which roll over at run time, a dead-letter topic's) are not known at deploy time.
    const cursorIds = props.queueNames.every((name) => !Token.isUnresolved(name))
      ? props.queueNames.map((name) => name.slice(`${prefix}s-`.length).replace(/(-dlq)?(\.fifo)?$/, ''))
      : undefined;
    for (const { definition, table } of props.tables) {
      fn.addEnvironment(definition.envVar, table.tableName);
      if (definition.logicalName === cursorsTable.logicalName && cursorIds !== undefined) {
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: [...consumerTableActions],
            resources: [table.tableArn],
            conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': cursorIds } },
          }),
        );
      } else {
        table.grant(fn, ...consumerTableActions);
      }
    }
    props.schedulerQueue.grantSendMessages(fn);
    const deploymentQueuesArn = stack.formatArn({
      service: 'sqs',
      resource: `${prefix}*`,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });
    fn.addToRolePolicy(
      new PolicyStatement({ actions: [...consumerSendActions], resources: [deploymentQueuesArn] }),
    );
    if (fn.role !== undefined) {
      NagSuppressions.addResourceSuppressions(
        fn.role,
        [
          {
            id: 'AwsSolutions-IAM5',
            reason:
              'Redelivery tokens and dead letters are sent to subscription queues created at run time, ' +
              `whose names are unknown at deploy time; the resource is the stage's queue-name prefix ${prefix}*, ` +
              "which holds this ackline deployment's queues only.",
            appliesTo: [`Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${prefix}*`],
          },
        ],
        true,
      );
    }
  }
}
