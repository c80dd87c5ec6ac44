import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Policies } from '../../domain/policies.ts';
import {
  type PolicyChange,
  type PolicyScope,
  type PolicyStore,
  policyScopeKey,
  policyScopeOf,
} from '../../ports/policy-store.ts';
import { N, num, queryAll, S } from './dynamodb-support.ts';

/**
 * Policies in the Catalog table, all under pk `POL` (they are few and small, and maintenance lists
 * them each run), sk `NS#<tenant/namespace>` or `T#<topic>`; attributes `rt`
 * (retentionTimeInMinutes), `rz` (retentionSizeInMB), `tt` (messageTTLInSeconds), `ms`
 * (maxSubscriptionsPerTopic), `mc` (maxConsumersPerSubscription), `de` (deduplicationEnabled, a boolean).
 */
export class DynamoDbPolicyStore implements PolicyStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async get(scope: PolicyScope): Promise<Policies | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key(scope), ConsistentRead: true }),
    );
    return result.Item ? policiesOf(result.Item) : undefined;
  }

  async list(): Promise<{ scope: PolicyScope; policies: Policies }[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(POLICIES_PK) },
      ConsistentRead: true,
    });
    const listed: { scope: PolicyScope; policies: Policies }[] = [];
    for (const item of items) {
      const policies = policiesOf(item);
      if (policies) listed.push({ scope: policyScopeOf(item.sk?.S ?? ''), policies });
    }
    return listed;
  }

  async update(scope: PolicyScope, change: PolicyChange): Promise<void> {
    const set: string[] = [];
    const remove: string[] = [];
    const values: Record<string, AttributeValue> = {};
    if (change.retention === null) remove.push('rt', 'rz');
    else if (change.retention) {
      set.push('rt = :rt', 'rz = :rz');
      values[':rt'] = N(change.retention.retentionTimeInMinutes);
      values[':rz'] = N(change.retention.retentionSizeInMB);
    }
    if (change.deduplicationEnabled === null) remove.push('de');
    else if (change.deduplicationEnabled !== undefined) {
      set.push('de = :de');
      values[':de'] = { BOOL: change.deduplicationEnabled };
    }
    for (const [field, attribute] of NUMBER_ATTRIBUTES) {
      const value = change[field];
      if (value === null) remove.push(attribute);
      else if (value !== undefined) {
        set.push(`${attribute} = :${attribute}`);
        values[`:${attribute}`] = N(value);
      }
    }
    if (set.length === 0 && remove.length === 0) return;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(scope),
        UpdateExpression: [
          set.length > 0 ? `SET ${set.join(', ')}` : '',
          remove.length > 0 ? `REMOVE ${remove.join(', ')}` : '',
        ]
          .filter(Boolean)
          .join(' '),
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  }
}

const POLICIES_PK = 'POL';

/** The policies that are one number, and their attributes. */
const NUMBER_ATTRIBUTES = [
  ['messageTTLInSeconds', 'tt'],
  ['maxSubscriptionsPerTopic', 'ms'],
  ['maxConsumersPerSubscription', 'mc'],
] as const;

function key(scope: PolicyScope): Record<string, AttributeValue> {
  return { pk: S(POLICIES_PK), sk: S(policyScopeKey(scope)) };
}

function policiesOf(item: Record<string, AttributeValue>): Policies | undefined {
  const time = num(item, 'rt');
  const size = num(item, 'rz');
  const policies: { -readonly [K in keyof Policies]: Policies[K] } = {};
  if (time !== undefined && size !== undefined) {
    policies.retention = { retentionTimeInMinutes: time, retentionSizeInMB: size };
  }
  for (const [field, attribute] of NUMBER_ATTRIBUTES) {
    const value = num(item, attribute);
    if (value !== undefined) policies[field] = value;
  }
  if (item.de?.BOOL !== undefined) policies.deduplicationEnabled = item.de.BOOL;
  return Object.keys(policies).length > 0 ? policies : undefined;
}
