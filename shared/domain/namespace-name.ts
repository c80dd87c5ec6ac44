import { PreconditionFailedError } from './errors.ts';
import { quote } from './quote.ts';

/** Pulsar's NamedEntity rule for tenants and namespaces: `^[-=:.\w]+$` (ASCII `\w`). */
const NAMED_ENTITY = /^[-=:.\w]+$/;

/** A tenant or namespace name Pulsar refuses (its admin API answers 412). */
export class InvalidNamespaceNameError extends PreconditionFailedError {}

/**
 * Checks a tenant name with Pulsar's NamedEntity rule (letters, digits, `_`, `-`, `=`, `:`, `.`).
 * @throws InvalidNamespaceNameError
 * @example validTenant('my-tenant'); // 'my-tenant'
 */
export function validTenant(tenant: string): string {
  if (!NAMED_ENTITY.test(tenant)) {
    throw new InvalidNamespaceNameError(
      `Tenant name ${quote(tenant)} is not valid: it may contain only letters, digits, '_', '-', '=', ':' and '.'`,
    );
  }
  return tenant;
}

/**
 * A v2 namespace name, `tenant/namespace`, both parts checked as Pulsar's NamespaceName does.
 * @example NamespaceName.of('public', 'default').toString(); // 'public/default'
 */
export class NamespaceName {
  private constructor(
    readonly tenant: string,
    readonly namespace: string,
  ) {}

  /** @throws InvalidNamespaceNameError naming the part that is not valid. */
  static of(tenant: string, namespace: string): NamespaceName {
    validTenant(tenant);
    if (!NAMED_ENTITY.test(namespace)) {
      throw new InvalidNamespaceNameError(
        `Namespace name ${quote(`${tenant}/${namespace}`)} is not valid: the namespace may contain only letters, digits, '_', '-', '=', ':' and '.'`,
      );
    }
    return new NamespaceName(tenant, namespace);
  }

  toString(): string {
    return `${this.tenant}/${this.namespace}`;
  }
}
