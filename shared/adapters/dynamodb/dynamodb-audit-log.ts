import { type DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { catalogTable } from '../../config/resources.ts';
import { type AuditLog, type AuditRecord, DEFAULT_AUDIT_RETENTION_DAYS } from '../../ports/audit-log.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { deleteAll, type Item, N, num, pad, queryAll, S, str } from './dynamodb-support.ts';

const DAY_MS = 86_400_000;
/** The partition of the expiry markers: one item per topic and day its records expire. */
const EXPIRY_PK = 'AUDX';
/** Markers a process remembers having written (the oldest are forgotten first). */
const MAX_REMEMBERED_MARKERS = 10_000;
/** The attribute DynamoDB's TTL reads (enabled on the Catalog table by the stateful stack). */
export const TTL_ATTRIBUTE = catalogTable.timeToLiveAttribute as string;

/**
 * Admin acknowledgements in the Catalog table: pk `AUDIT#<topic>`, sk
 * `<atMs:15>#<requestId>`, so a topic's log reads newest first in one Query.
 *
 * Retention: every record carries `ttl` (epoch seconds, atMs + retention), which DynamoDB's TTL
 * deletes on AWS. The embedded stack has no TTL: for `purgeExpired`, the first record of a topic
 * that expires on a given day also writes a marker, pk `AUDX`, sk `<expiryDay:6>#<topic>`,
 * `ub` the newest atMs that expires that day (markers carry `ttl` too). A purge reads the markers
 * of days gone by and deletes their records: work in proportion to what expired, never a scan.
 * Cost of a record: one write, plus one marker write per topic, day and process.
 */
export class DynamoDbAuditLog implements AuditLog {
  private readonly markers = new Set<string>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly retentionMs: number = DEFAULT_AUDIT_RETENTION_DAYS * DAY_MS,
  ) {}

  async record(record: AuditRecord): Promise<void> {
    const expiresAtMs = record.atMs + this.retentionMs;
    const ttl = N(Math.ceil(expiresAtMs / 1000));
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...itemKey(catalogKeys.audit(record.topic, record.atMs, record.requestId)),
          at: N(record.atMs),
          ro: S(record.role),
          po: S(record.position),
          su: { L: record.subscriptions.map((name) => S(name)) },
          dr: { BOOL: record.dryRun },
          ou: S(record.outcome),
          [TTL_ATTRIBUTE]: ttl,
          ...(record.operation ? { op: S(record.operation) } : {}),
        },
      }),
    );
    const expiryDay = Math.floor(expiresAtMs / DAY_MS);
    const marker = catalogKeys.auditExpiry(expiryDay, record.topic).sk;
    if (this.markers.has(marker)) return;
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          pk: S(EXPIRY_PK),
          sk: S(marker),
          ub: N((expiryDay + 1) * DAY_MS - this.retentionMs),
          [TTL_ATTRIBUTE]: N(Math.ceil(((expiryDay + 1) * DAY_MS) / 1000)),
        },
      }),
    );
    this.markers.add(marker);
    if (this.markers.size > MAX_REMEMBERED_MARKERS) this.markers.clear();
  }

  async purgeExpired(nowMs: number, before: () => boolean): Promise<number> {
    const today = Math.floor(nowMs / DAY_MS);
    let deleted = 0;
    for (;;) {
      if (!before()) return deleted;
      // Markers of days wholly gone by: every record under them has expired.
      const { Items: markers = [] } = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk < :today',
          ExpressionAttributeValues: { ':pk': S(EXPIRY_PK), ':today': S(pad(today, 6)) },
          Limit: 25,
          ConsistentRead: true,
        }),
      );
      if (markers.length === 0) return deleted;
      for (const marker of markers) {
        if (!before()) return deleted;
        const sk = str(marker, 'sk') as string;
        const topic = sk.slice(sk.indexOf('#') + 1);
        const records = await queryAll(this.client, {
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk < :upTo',
          FilterExpression: '#ttl <= :now',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':pk': S(`AUDIT#${topic}`),
            ':upTo': S(pad((num(marker, 'ub') ?? 0) + 1, 15)),
            ':now': N(Math.floor(nowMs / 1000)),
          },
          ProjectionExpression: 'pk, sk',
          ConsistentRead: true,
        });
        await deleteAll(this.client, this.tableName, [...records, { pk: S(EXPIRY_PK), sk: S(sk) } as Item]);
        deleted += records.length;
      }
    }
  }

  /**
   * Newest first, filtered on `ttl` (DynamoDB's TTL deletes an expired record days after it
   * expires, and reads return it until then). The filter applies after each page's Limit, so pages
   * are read until `limit` records are found or the topic's records end: the expired ones are
   * usually the oldest, read last. Cost: the records read, expired ones included (1 read unit per
   * 4 KB, strongly consistent).
   */
  async list(topic: string, limit: number, nowMs: number): Promise<AuditRecord[]> {
    if (limit < 1) return [];
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: '#ttl > :now',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':pk': S(`AUDIT#${topic}`), ':now': N(Math.floor(nowMs / 1000)) },
          ScanIndexForward: false,
          Limit: limit,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey && items.length < limit);
    return items.slice(0, limit).map((item) => ({
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
