export type AuthAction = 'produce' | 'consume' | 'acknowledge_message';

export const authActions: readonly AuthAction[] = ['produce', 'consume', 'acknowledge_message'];

/**
 * Grants of actions to roles, on a topic (its full base name) or on a whole
 * namespace (`tenant/namespace`). A grant replaces the role's actions on that
 * resource, as Pulsar's grant-permission does.
 */
export interface PermissionStore {
  grant(resource: string, role: string, actions: readonly AuthAction[]): Promise<void>;
  revoke(resource: string, role: string): Promise<void>;
  list(resource: string): Promise<Record<string, AuthAction[]>>;
  /** The actions `role` holds on any of `resources` (one round trip). */
  actionsOf(role: string, resources: readonly string[]): Promise<Set<AuthAction>>;
}
