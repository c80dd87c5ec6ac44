import { NamespaceAlreadyExistsError, TenantAlreadyExistsError } from '../../shared/domain/catalog-errors.ts';
import type { NamespaceRecord, TenantCatalog, TenantRecord } from '../../shared/ports/tenant-catalog.ts';
import { compareUtf8, InjectedFaults } from './in-memory-faults.ts';

/**
 * TenantCatalog in memory, with the semantics of DynamoDbTenantCatalog: conditional creation,
 * deletes that ignore what is missing, lists sorted in UTF-8 byte order. Deleting a tenant leaves
 * its namespaces alone (the use case refuses to delete a tenant that has any). Not persisted;
 * every operation is atomic.
 */
export class InMemoryTenantCatalog implements TenantCatalog {
  private readonly tenants = new Map<string, TenantRecord>();
  /** `tenant` -> namespace -> record. */
  private readonly namespaces = new Map<string, Map<string, NamespaceRecord>>();
  private readonly faults = new InjectedFaults<keyof TenantCatalog>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof TenantCatalog, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async createTenant(record: TenantRecord): Promise<void> {
    await this.faults.enter('createTenant');
    if (this.tenants.has(record.tenant)) throw new TenantAlreadyExistsError(record.tenant);
    this.tenants.set(record.tenant, copyTenant(record));
  }

  async getTenant(tenant: string): Promise<TenantRecord | undefined> {
    await this.faults.enter('getTenant');
    const record = this.tenants.get(tenant);
    return record && copyTenant(record);
  }

  async listTenants(): Promise<TenantRecord[]> {
    await this.faults.enter('listTenants');
    return [...this.tenants.values()].sort((a, b) => compareUtf8(a.tenant, b.tenant)).map(copyTenant);
  }

  async deleteTenant(tenant: string): Promise<void> {
    await this.faults.enter('deleteTenant');
    this.tenants.delete(tenant);
  }

  async createNamespace(record: NamespaceRecord): Promise<void> {
    await this.faults.enter('createNamespace');
    const inTenant = this.namespaces.get(record.tenant) ?? new Map<string, NamespaceRecord>();
    if (inTenant.has(record.namespace)) {
      throw new NamespaceAlreadyExistsError(`${record.tenant}/${record.namespace}`);
    }
    inTenant.set(record.namespace, { ...record });
    this.namespaces.set(record.tenant, inTenant);
  }

  async getNamespace(tenant: string, namespace: string): Promise<NamespaceRecord | undefined> {
    await this.faults.enter('getNamespace');
    const record = this.namespaces.get(tenant)?.get(namespace);
    return record && { ...record };
  }

  async listNamespaces(tenant: string): Promise<NamespaceRecord[]> {
    await this.faults.enter('listNamespaces');
    return [...(this.namespaces.get(tenant)?.values() ?? [])]
      .sort((a, b) => compareUtf8(a.namespace, b.namespace))
      .map((record) => ({ ...record }));
  }

  async deleteNamespace(tenant: string, namespace: string): Promise<void> {
    await this.faults.enter('deleteNamespace');
    this.namespaces.get(tenant)?.delete(namespace);
  }
}

function copyTenant(record: TenantRecord): TenantRecord {
  return {
    ...record,
    info: { adminRoles: [...record.info.adminRoles], allowedClusters: [...record.info.allowedClusters] },
  };
}
