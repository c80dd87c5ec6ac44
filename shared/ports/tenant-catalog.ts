/** Pulsar's TenantInfo: the roles that administer the tenant and the clusters it may use. */
export interface TenantInfo {
  readonly adminRoles: readonly string[];
  readonly allowedClusters: readonly string[];
}

/** A tenant created by the admin API. */
export interface TenantRecord {
  readonly tenant: string;
  readonly info: TenantInfo;
  readonly createdAtMs: number;
}

/** A namespace created by the admin API (`tenant/namespace`). */
export interface NamespaceRecord {
  readonly tenant: string;
  readonly namespace: string;
  readonly createdAtMs: number;
}

/**
 * Tenants and the namespaces created in them (Pulsar's `/admin/v2/tenants` and
 * `/admin/v2/namespaces` resources). Creation is conditional: creating what exists throws
 * TenantAlreadyExistsError / NamespaceAlreadyExistsError; deletes ignore what is missing; lists are
 * sorted by name (UTF-8 byte order). Every call is one request to the store (a list pages), and
 * each write touches one item: "create a namespace only while its tenant exists" is two steps,
 * checked by the use case, not one atomic write.
 */
export interface TenantCatalog {
  createTenant(record: TenantRecord): Promise<void>;
  getTenant(tenant: string): Promise<TenantRecord | undefined>;
  listTenants(): Promise<TenantRecord[]>;
  deleteTenant(tenant: string): Promise<void>;

  createNamespace(record: NamespaceRecord): Promise<void>;
  getNamespace(tenant: string, namespace: string): Promise<NamespaceRecord | undefined>;
  listNamespaces(tenant: string): Promise<NamespaceRecord[]>;
  deleteNamespace(tenant: string, namespace: string): Promise<void>;
}
