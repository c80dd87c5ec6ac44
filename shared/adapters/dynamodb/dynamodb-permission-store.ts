import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { AuthAction, PermissionStore } from '../../ports/permission-store.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { batchGetAll, deleteAll, type Item, queryAll, S, str } from './dynamodb-support.ts';

/**
 * Grants in the Catalog table: pk `PERM#<resource>` (a full topic name or
 * `tenant/namespace`), sk the role, `a` the actions (string set).
 */
export class DynamoDbPermissionStore implements PermissionStore {
  /** @param pause between BatchGetItem attempts (default: jittered doubling backoff; tests pass their own). */
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly pause?: (attempt: number) => Promise<void>,
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

  /**
   * The union of `role`'s actions on `resources`: one BatchGetItem per 100 resources, keys
   * DynamoDB left unprocessed sent again with jittered backoff at most MAX_BATCH_GET_ATTEMPTS
   * times, then an error (batchGetAll).
   */
  async actionsOf(role: string, resources: readonly string[]): Promise<Set<AuthAction>> {
    const actions = new Set<AuthAction>();
    if (resources.length === 0) return actions;
    const items = await batchGetAll(this.client, {
      tableName: this.tableName,
      keys: [...new Set(resources)].map((resource) => key(resource, role)),
      ...(this.pause ? { pause: this.pause } : {}),
    });
    for (const item of items) {
      for (const action of item.a?.SS ?? []) actions.add(action as AuthAction);
    }
    return actions;
  }
}

function key(resource: string, role: string): Item {
  return itemKey(catalogKeys.permission(resource, role));
}
