import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  type KeyType,
  type QueueDefinition,
  schedulerQueue,
  type TableDefinition,
  tables,
} from '../shared/config/resources.ts';

export interface StatefulStackProps extends StackProps {
  readonly stage: string;
  /**
   * What CloudFormation does with tables and queues when they leave the stack.
   * RETAIN by default: the tables are the record of every cursor and entry.
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** A table of the stateful stack with the definition it was built from. */
export interface AcklineTable {
  readonly definition: TableDefinition;
  readonly table: Table;
}

const attributeTypes: Record<KeyType, AttributeType> = { S: AttributeType.STRING, N: AttributeType.NUMBER };

/**
 * Everything that holds state: the DynamoDB tables and the scheduler queue with
 * its dead-letter queue, built from shared/config/resources.ts (the embedded
 * stack builds from the same definitions). Per-subscription queues are not
 * here: the control plane creates them at run time under the stage's prefix.
 *
 * Physical names are left to CloudFormation, so a retained resource never
 * blocks a redeploy; functions learn the names from environment variables.
 */
export class StatefulStack extends Stack {
  public readonly tables: readonly AcklineTable[];
  public readonly schedulerQueue: Queue;
  public readonly schedulerDeadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.tables = tables.map((definition) => ({
      definition,
      table: new Table(this, definition.logicalName, {
        partitionKey: {
          name: definition.partitionKey.name,
          type: attributeTypes[definition.partitionKey.type],
        },
        sortKey: { name: definition.sortKey.name, type: attributeTypes[definition.sortKey.type] },
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        encryption: TableEncryption.AWS_MANAGED,
        removalPolicy,
      }),
    }));

    const queues = this.queueWithDeadLetter(schedulerQueue, removalPolicy);
    this.schedulerQueue = queues.queue;
    this.schedulerDeadLetterQueue = queues.deadLetterQueue;
  }

  private queueWithDeadLetter(
    definition: QueueDefinition,
    removalPolicy: RemovalPolicy,
  ): { queue: Queue; deadLetterQueue: Queue } {
    const deadLetterQueue = new Queue(this, `${definition.logicalName}DeadLetter`, {
      retentionPeriod: Duration.seconds(definition.messageRetentionSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy,
    });
    const queue = new Queue(this, definition.logicalName, {
      visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(definition.messageRetentionSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy,
    });
    return { queue, deadLetterQueue };
  }
}
