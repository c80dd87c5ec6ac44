import { BatchGetItemCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { AuthAction, PermissionStore } from '../../ports/permission-store.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { backoff, deleteAll, type Item, queryAll, S, str } from './dynamodb-support.ts';

/**
 * Grants in the Catalog table: pk `PERM#<resource>` (a full topic name or
 * `tenant/namespace`), sk the role, `a` the actions (string set).
 */
export class DynamoDbPermissionStore implements PermissionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async grant(resource: string, role: string, actions: readonly AuthAction[]): Promise<void> {
    if (actions.length === 0) {
      await this.revoke(resource, role);
      return;
    }
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...key(resource, role), a: { SS: [...new Set(actions)] } },
      }),
    );
  }

  async revoke(resource: string, role: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [key(resource, role)]);
  }

  async list(resource: string): Promise<Record<string, AuthAction[]>> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(`PERM#${resource}`) },
      ConsistentRead: true,
    });
    const grants: Record<string, AuthAction[]> = {};
    for (const item of items) grants[str(item, 'sk') as string] = ((item.a?.SS ?? []) as AuthAction[]).sort();
    return grants;
  }

  async actionsOf(role: string, resources: readonly string[]): Promise<Set<AuthAction>> {
    const actions = new Set<AuthAction>();
    if (resources.length === 0) return actions;
    const unique = [...new Set(resources)];
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Item[] = unique.slice(i, i + 100).map((resource) => key(resource, role));
      for (let attempt = 0; keys.length > 0; attempt++) {
        const result = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          for (const action of item.a?.SS ?? []) actions.add(action as AuthAction);
        }
        keys = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Item[];
        if (keys.length > 0) await backoff(attempt);
      }
    }
    return actions;
  }
}

function key(resource: string, role: string): Item {
  return itemKey(catalogKeys.permission(resource, role));
}
