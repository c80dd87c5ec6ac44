import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DeletionJob, DeletionJobStore } from '../../ports/deletion-jobs.ts';
import { deleteAll, type Item, isConditionalCheckFailed, queryAll, S, str } from './dynamodb-support.ts';

/** The partition key of every deletion job: one Query lists them all. */
const JOBS_PK = 'DJ';

/**
 * Deletion jobs in the Catalog table: pk `DJ`, sk the jobId (`<groupId>#<index>`, the groupId
 * starting with the creation time, so jobs list oldest first), `d` the job (JSON). One item per
 * topic partition: a job holds one partition's ledger ids and cursor ids, a few hundred bytes.
 * Deletions are rare and short-lived, so the one partition key is never hot.
 */
export class DynamoDbDeletionJobs implements DeletionJobStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async save(job: DeletionJob): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: itemOf(job) }));
  }

  async update(job: DeletionJob): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: itemOf(job),
          ConditionExpression: 'attribute_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async get(jobId: string): Promise<DeletionJob | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: S(JOBS_PK), sk: S(jobId) },
        ConsistentRead: true,
      }),
    );
    return item ? jobOf(item) : undefined;
  }

  async group(groupId: string): Promise<DeletionJob[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :g)',
      ExpressionAttributeValues: { ':pk': S(JOBS_PK), ':g': S(`${groupId}#`) },
      ConsistentRead: true,
    });
    return items.map(jobOf);
  }

  async list(): Promise<DeletionJob[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(JOBS_PK) },
      ConsistentRead: true,
    });
    return items.map(jobOf);
  }

  async remove(jobId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [{ pk: S(JOBS_PK), sk: S(jobId) }]);
  }
}

function itemOf(job: DeletionJob): Item {
  return { pk: S(JOBS_PK), sk: S(job.jobId), d: S(JSON.stringify(job)) };
}

function jobOf(item: Item): DeletionJob {
  return JSON.parse(str(item, 'd') as string) as DeletionJob;
}
