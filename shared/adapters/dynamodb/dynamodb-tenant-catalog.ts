import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { NamespaceAlreadyExistsError, TenantAlreadyExistsError } from '../../domain/catalog-errors.ts';
import type { NamespaceRecord, TenantCatalog, TenantRecord } from '../../ports/tenant-catalog.ts';
import {
  deleteAll,
  type Item,
  isConditionalCheckFailed,
  N,
  num,
  queryAll,
  S,
  str,
} from './dynamodb-support.ts';

const TENANTS_PK = 'TENANTS';
const TENANT_SK = 'TENANT#';
const NAMESPACE_SK = 'NAMESPACE#';

/**
 * Tenants and namespaces in the Catalog table.
 *
 * | pk | sk | attributes |
 * | `TENANTS` | `TENANT#<tenant>` | `ar` admin roles, `ac` allowed clusters (JSON string arrays), `ca` created at |
 * | `TENANT#<tenant>` | `NAMESPACE#<namespace>` | `ca` created at |
 *
 * Every tenant shares one partition key, so listing them is one Query: tenants are few and
 * rarely written (a hot key would need thousands of tenant writes a second). A tenant's
 * namespaces are one Query. Reads are strongly consistent (a create followed by a list sees it).
 */
export class DynamoDbTenantCatalog implements TenantCatalog {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async createTenant(record: TenantRecord): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...tenantKey(record.tenant),
            ar: S(JSON.stringify(record.info.adminRoles)),
            ac: S(JSON.stringify(record.info.allowedClusters)),
            ca: N(record.createdAtMs),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new TenantAlreadyExistsError(record.tenant);
      throw error;
    }
  }

  async getTenant(tenant: string): Promise<TenantRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: tenantKey(tenant), ConsistentRead: true }),
    );
    return item ? toTenantRecord(item) : undefined;
  }

  async listTenants(): Promise<TenantRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': S(TENANTS_PK), ':t': S(TENANT_SK) },
      ConsistentRead: true,
    });
    return items.map(toTenantRecord);
  }

  async deleteTenant(tenant: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [tenantKey(tenant)]);
  }

  async createNamespace(record: NamespaceRecord): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...namespaceKey(record.tenant, record.namespace), ca: N(record.createdAtMs) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new NamespaceAlreadyExistsError(`${record.tenant}/${record.namespace}`);
      }
      throw error;
    }
  }

  async getNamespace(tenant: string, namespace: string): Promise<NamespaceRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: namespaceKey(tenant, namespace),
        ConsistentRead: true,
      }),
    );
    return item ? toNamespaceRecord(tenant, item) : undefined;
  }

  async listNamespaces(tenant: string): Promise<NamespaceRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :n)',
      ExpressionAttributeValues: { ':pk': S(`${TENANT_SK}${tenant}`), ':n': S(NAMESPACE_SK) },
      ConsistentRead: true,
    });
    return items.map((item) => toNamespaceRecord(tenant, item));
  }

  async deleteNamespace(tenant: string, namespace: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [namespaceKey(tenant, namespace)]);
  }
}

function tenantKey(tenant: string): Item {
  return { pk: S(TENANTS_PK), sk: S(`${TENANT_SK}${tenant}`) };
}

function namespaceKey(tenant: string, namespace: string): Item {
  return { pk: S(`${TENANT_SK}${tenant}`), sk: S(`${NAMESPACE_SK}${namespace}`) };
}

function toTenantRecord(item: Item): TenantRecord {
  return {
    tenant: (str(item, 'sk') as string).slice(TENANT_SK.length),
    info: {
      adminRoles: JSON.parse(str(item, 'ar') ?? '[]') as string[],
      allowedClusters: JSON.parse(str(item, 'ac') ?? '[]') as string[],
    },
    createdAtMs: num(item, 'ca') ?? 0,
  };
}

function toNamespaceRecord(tenant: string, item: Item): NamespaceRecord {
  return {
    tenant,
    namespace: (str(item, 'sk') as string).slice(NAMESPACE_SK.length),
    createdAtMs: num(item, 'ca') ?? 0,
  };
}
