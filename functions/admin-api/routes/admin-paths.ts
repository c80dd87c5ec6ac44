import { NotFoundError, ValidationError } from '../../../shared/domain/errors.ts';
import { NamespaceName } from '../../../shared/domain/namespace-name.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { HttpRequest } from '../../../shared/http/http-types.ts';

/** A namespace under a domain (`persistent`, `non-persistent`): the generic v2 base, registered after the specific paths it would also match. */
export const V2 = '/admin/v2/{domain}/{tenant}/{namespace}';
export const TOPIC = `${V2}/{topic}`;
export const SUBSCRIPTION = `${TOPIC}/subscription/{subscription}`;
export const V1_TOPIC = '/admin/v1/{domain}/{property}/{cluster}/{namespace}/{topic}';
export const LEGACY_V1_TOPIC = '/admin/{domain}/{property}/{cluster}/{namespace}/{topic}';
export const NAMESPACE = '/admin/v2/namespaces/{tenant}/{namespace}';

/** The topic a v2 `{domain}/{tenant}/{namespace}/{topic}` path names; any other domain has no route (404). */
export function topicOf(request: HttpRequest): TopicName {
  const { domain, tenant, namespace, topic } = request.rawParams as Record<string, string>;
  if (domain !== 'persistent' && domain !== 'non-persistent') {
    throw new NotFoundError(`No route for ${request.method} ${request.path}`);
  }
  return TopicName.fromRest(domain, decode(tenant), decode(namespace), topic as string);
}

export function decode(value: string | undefined): string {
  try {
    return decodeURIComponent(value ?? '');
  } catch {
    throw new ValidationError(`Path segment '${value}' is not valid percent-encoding`);
  }
}

export function namespaceNameOf(request: HttpRequest): NamespaceName {
  return NamespaceName.of(request.params.tenant as string, request.params.namespace as string);
}

/** The namespace of `GET /admin/v2/{domain}/{tenant}/{namespace}[/partitioned]`, as a probe topic name. */
export function namespaceOfListing(request: HttpRequest): TopicName {
  const { domain } = request.params;
  if (domain !== 'persistent' && domain !== 'non-persistent') {
    throw new NotFoundError(`No route for ${request.method} ${request.path}`);
  }
  return TopicName.parse(`${domain}://${request.params.tenant}/${request.params.namespace}/x`);
}

export function namespaceOf(request: HttpRequest): { namespace: string } {
  // Validates tenant and namespace with the topic-name rules.
  const probe = TopicName.parse(`persistent://${request.params.tenant}/${request.params.namespace}/x`);
  return { namespace: probe.namespaceName };
}
