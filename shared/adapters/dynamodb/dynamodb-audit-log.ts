import { type DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { AuditLog, AuditRecord } from '../../ports/audit-log.ts';
import { N, num, pad, S, str } from './dynamodb-support.ts';

/**
 * Admin acknowledgements in the Catalog table: pk `AUDIT#<topic>`, sk
 * `<atMs:15>#<requestId>`, so a topic's log reads newest first in one Query.
 */
export class DynamoDbAuditLog implements AuditLog {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async record(record: AuditRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          pk: S(`AUDIT#${record.topic}`),
          sk: S(`${pad(record.atMs, 15)}#${record.requestId}`),
          at: N(record.atMs),
          ro: S(record.role),
          po: S(record.position),
          su: { L: record.subscriptions.map((name) => S(name)) },
          dr: { BOOL: record.dryRun },
          ou: S(record.outcome),
          ...(record.operation ? { op: S(record.operation) } : {}),
        },
      }),
    );
  }

  async list(topic: string, limit: number): Promise<AuditRecord[]> {
    if (limit < 1) return [];
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': S(`AUDIT#${topic}`) },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (result.Items ?? []).map((item) => ({
      ...(item.op?.S ? { operation: item.op.S as NonNullable<AuditRecord['operation']> } : {}),
      atMs: num(item, 'at') ?? 0,
      role: str(item, 'ro') ?? '',
      topic,
      position: str(item, 'po') ?? '',
      subscriptions: (item.su?.L ?? []).map((name) => name.S ?? ''),
      dryRun: item.dr?.BOOL ?? false,
      outcome: str(item, 'ou') ?? '',
      requestId: (str(item, 'sk') ?? '').replace(/^[^#]*#/, ''),
    }));
  }
}
