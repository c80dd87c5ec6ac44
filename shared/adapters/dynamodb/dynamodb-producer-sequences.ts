import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type {
  ClaimRequest,
  ProducerSequenceState,
  ProducerSequenceStore,
  SequenceClaim,
  SequencedBatch,
} from '../../ports/producer-sequences.ts';
import { type Item, isConditionalCheckFailed, N, num, S, str } from './dynamodb-support.ts';

/**
 * Deduplication state in the Catalog table: pk `PS#<partition>#<producerName>` (JSON-encoded pair),
 * sk `M`; attributes `inc` the partition's incarnation, `ls` the last sequence id stored, `bt` the
 * last MAX_SEQUENCED_BATCHES batches (JSON), and while a publish holds a claim `pt` its token, `pa`
 * when it claimed and `pd` the claim (JSON). The item is at most about 1 KB whatever the producer
 * published (8 batches of 2 runs), so each write is 1 write unit.
 *
 * Each producer name has its own partition key: its writes (two per publish batch) add no load to
 * the partition's ledger state item (`ML#`, one write per batch of every producer). One producer
 * publishing to one partition reaches DynamoDB's 1,000 write units a second per key at 500 batches
 * a second, half the ledger state item's ceiling of the whole partition.
 */
export class DynamoDbProducerSequenceStore implements ProducerSequenceStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async claim(request: ClaimRequest): Promise<{ claimed: boolean; state: ProducerSequenceState }> {
    const { claim } = request;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: key(request.partition, request.producerName),
            UpdateExpression: 'SET inc = :inc, ls = if_not_exists(ls, :none), pt = :t, pa = :a, pd = :pd',
            ConditionExpression:
              'attribute_not_exists(pk) OR (inc = :inc AND ls < :first AND (attribute_not_exists(pt) OR pa < :stale))',
            ExpressionAttributeValues: {
              ':inc': S(request.incarnation),
              ':none': N(-1),
              ':t': S(claim.token),
              ':a': N(claim.claimedAtMs),
              ':pd': S(JSON.stringify(claim)),
              ':first': N(claim.firstSequenceId),
              ':stale': N(request.staleBeforeMs),
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { claimed: true, state: stateOf(result.Attributes as Item) };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      const state = await this.get(request.partition, request.producerName);
      if (state === undefined) continue;
      if (state.incarnation === request.incarnation) return { claimed: false, state };
      // The state of a deleted topic's incarnation: replaced (conditional on that incarnation).
      await this.reset(request, state.incarnation);
    }
    throw new Error(`The deduplication state of ${request.producerName} kept changing; try again`);
  }

  async record(request: {
    partition: string;
    producerName: string;
    token: string;
    lastSequenceId: number;
    batches: readonly SequencedBatch[];
  }): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: key(request.partition, request.producerName),
          UpdateExpression: 'SET ls = :ls, bt = :bt REMOVE pt, pa, pd',
          ConditionExpression: 'pt = :t',
          ExpressionAttributeValues: {
            ':ls': N(request.lastSequenceId),
            ':bt': S(JSON.stringify(request.batches)),
            ':t': S(request.token),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async get(partition: string, producerName: string): Promise<ProducerSequenceState | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: key(partition, producerName),
        ConsistentRead: true,
      }),
    );
    return result.Item ? stateOf(result.Item) : undefined;
  }

  private async reset(request: ClaimRequest, oldIncarnation: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: key(request.partition, request.producerName),
          UpdateExpression: 'SET inc = :inc, ls = :none REMOVE bt, pt, pa, pd',
          ConditionExpression: 'inc = :old',
          ExpressionAttributeValues: {
            ':inc': S(request.incarnation),
            ':none': N(-1),
            ':old': S(oldIncarnation),
          },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}

function key(partition: string, producerName: string): Record<string, AttributeValue> {
  return { pk: S(`PS#${JSON.stringify([partition, producerName])}`), sk: S('M') };
}

function stateOf(item: Item): ProducerSequenceState {
  const pending = str(item, 'pd');
  const batches = str(item, 'bt');
  return {
    incarnation: str(item, 'inc') ?? '',
    lastSequenceId: num(item, 'ls') ?? -1,
    batches: batches ? (JSON.parse(batches) as SequencedBatch[]) : [],
    ...(pending && str(item, 'pt') ? { pending: JSON.parse(pending) as SequenceClaim } : {}),
  };
}
