import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import type { ExclusiveProducer } from '../../domain/producer-access.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { Acquired, AcquireRequest, ProducerAccessStore } from '../../ports/producer-access.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { exclusiveProducerOf } from './dynamodb-ledger.ts';
import { type Item, isConditionalCheckFailed, N, S } from './dynamodb-support.ts';

/**
 * The exclusive producer of a partition, on the partition's ledger state item (`ML#<partition>`,
 * `M`; see DynamoDbLedger), so that each publish's id allocation checks it in the same conditional
 * write: `xi` holder id, `xn` its name, `xe` the topic epoch it took the partition at, `xu` its lease
 * end (epoch ms), `te` the partition's topic epoch (+1 at every acquisition, never reset while the
 * partition lives). About 100 bytes more on an item every publish writes: still one write unit for
 * names of usual length.
 */
export class DynamoDbProducerAccessStore implements ProducerAccessStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async acquire(request: AcquireRequest): Promise<Acquired> {
    // A holder that leaves between the refused write and its read: the next attempt takes it.
    for (let attempt = 0; ; attempt += 1) {
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: stateKey(request.partition),
            UpdateExpression:
              'SET xi = :xi, xn = :xn, xu = :xu, xe = if_not_exists(te, :zero) + :one, te = if_not_exists(te, :zero) + :one',
            ConditionExpression: request.fence
              ? 'attribute_exists(pk)'
              : 'attribute_exists(pk) AND (attribute_not_exists(xi) OR xu < :now OR xi = :xi)',
            ExpressionAttributeValues: {
              ':xi': S(request.producerId),
              ':xn': S(request.producerName),
              ':xu': N(request.leaseUntilMs),
              ':zero': N(0),
              ':one': N(1),
              ...(request.fence ? {} : { ':now': N(request.nowMs) }),
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return {
          acquired: true,
          holder: exclusiveProducerOf(result.Attributes as Item) as ExclusiveProducer,
        };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      const state = await this.read(request.partition);
      if (state === undefined) throw new TopicNotFoundError(request.partition.toString());
      const holder = exclusiveProducerOf(state);
      if (holder !== undefined || attempt >= 2) {
        return { acquired: false, holder };
      }
    }
  }

  async renew(request: {
    readonly partition: TopicName;
    readonly producerId: string;
    readonly leaseUntilMs: number;
  }): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: stateKey(request.partition),
          UpdateExpression: 'SET xu = :xu',
          ConditionExpression: 'xi = :xi',
          ExpressionAttributeValues: {
            ':xi': S(request.producerId),
            ':xu': N(request.leaseUntilMs),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async release(partition: TopicName, producerId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: stateKey(partition),
          UpdateExpression: 'REMOVE xi, xn, xu, xe',
          ConditionExpression: 'xi = :xi',
          ExpressionAttributeValues: { ':xi': S(producerId) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async holder(partition: TopicName): Promise<ExclusiveProducer | undefined> {
    const state = await this.read(partition);
    return state === undefined ? undefined : exclusiveProducerOf(state);
  }

  private async read(partition: TopicName): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: stateKey(partition),
        ConsistentRead: true,
        ProjectionExpression: 'pk, xi, xn, xe, xu',
      }),
    );
    return result.Item;
  }
}

function stateKey(partition: TopicName) {
  return itemKey(catalogKeys.ledgerState(partition));
}
