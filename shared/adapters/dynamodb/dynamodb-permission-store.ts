import { BatchGetItemCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { AuthAction, PermissionStore } from '../../ports/permission-store.ts';
import { deleteAll, type Item, queryAll, S, str } from './dynamodb-support.ts';

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
        Item: { ...key(resource, role), a: { SS: [...actions] } },
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
    const result = await this.client.send(
      new BatchGetItemCommand({
        RequestItems: {
          [this.tableName]: { Keys: [...new Set(resources)].map((r) => key(r, role)), ConsistentRead: true },
        },
      }),
    );
    for (const item of result.Responses?.[this.tableName] ?? []) {
      for (const action of item.a?.SS ?? []) actions.add(action as AuthAction);
    }
    return actions;
  }
}

function key(resource: string, role: string): Item {
  return { pk: S(`PERM#${resource}`), sk: S(role) };
}
