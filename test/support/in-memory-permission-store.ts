import type { AuthAction, PermissionStore } from '../../shared/ports/permission-store.ts';
import { InjectedFaults } from './in-memory-faults.ts';

/**
 * PermissionStore in memory, with the semantics of DynamoDbPermissionStore:
 * a grant replaces the role's actions on the resource, granting no action
 * revokes, and `list` gives each role's actions sorted. Not persisted; every
 * operation is atomic.
 */
export class InMemoryPermissionStore implements PermissionStore {
  /** Resource -> role -> actions. */
  private readonly grants = new Map<string, Map<string, ReadonlySet<AuthAction>>>();
  private readonly faults = new InjectedFaults<keyof PermissionStore>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof PermissionStore, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async grant(resource: string, role: string, actions: readonly AuthAction[]): Promise<void> {
    await this.faults.enter('grant');
    if (actions.length === 0) {
      this.grants.get(resource)?.delete(role);
      return;
    }
    const roles = this.grants.get(resource) ?? new Map<string, ReadonlySet<AuthAction>>();
    roles.set(role, new Set(actions));
    this.grants.set(resource, roles);
  }

  async revoke(resource: string, role: string): Promise<void> {
    await this.faults.enter('revoke');
    this.grants.get(resource)?.delete(role);
  }

  async list(resource: string): Promise<Record<string, AuthAction[]>> {
    await this.faults.enter('list');
    const listed: Record<string, AuthAction[]> = {};
    for (const [role, actions] of this.grants.get(resource) ?? []) listed[role] = [...actions].sort();
    return listed;
  }

  async actionsOf(role: string, resources: readonly string[]): Promise<Set<AuthAction>> {
    await this.faults.enter('actionsOf');
    const actions = new Set<AuthAction>();
    for (const resource of resources) {
      for (const action of this.grants.get(resource)?.get(role) ?? []) actions.add(action);
    }
    return actions;
  }
}
