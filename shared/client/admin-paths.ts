import { AcklineAdminArgumentError } from './errors.ts';

/** A topic name resolved to the parts of a v2 admin REST path. */
export interface TopicPathParts {
  readonly domain: 'persistent' | 'non-persistent';
  readonly tenant: string;
  readonly namespace: string;
  /** The topic's name inside its namespace, e.g. `orders` or `orders-partition-0`. */
  readonly localName: string;
}

const DOMAINS = ['persistent', 'non-persistent'] as const;

/**
 * Resolves a topic name as pulsar-admin accepts it: `persistent://tenant/ns/topic`,
 * `non-persistent://tenant/ns/topic`, the short `tenant/ns/topic` (persistent) or a bare `topic`
 * (persistent, in `public/default`). Legacy names with a cluster have no v2 path and are refused.
 * The server validates names fully; this only refuses what cannot be put in a URL path.
 *
 * @example
 * parseTopic('my-tenant/my-ns/orders'); // { domain: 'persistent', tenant: 'my-tenant', namespace: 'my-ns', localName: 'orders' }
 */
export function parseTopic(topic: string): TopicPathParts {
  let domainText = 'persistent';
  let rest = topic;
  const separator = topic.indexOf('://');
  if (separator >= 0) {
    domainText = topic.slice(0, separator);
    rest = topic.slice(separator + 3);
  }
  const domain = DOMAINS.find((candidate) => candidate === domainText);
  if (domain === undefined) {
    throw new AcklineAdminArgumentError(
      `Invalid topic name '${topic}': the domain must be persistent or non-persistent, not '${domainText}'`,
    );
  }
  const parts = rest.split('/');
  if (separator < 0 && parts.length === 1) {
    return {
      domain,
      tenant: 'public',
      namespace: 'default',
      localName: checkSegment(parts[0]!, 'topic', topic),
    };
  }
  if (parts.length !== 3) {
    throw new AcklineAdminArgumentError(
      `Invalid topic name '${topic}': expected persistent://tenant/namespace/topic or tenant/namespace/topic`,
    );
  }
  return {
    domain,
    tenant: checkSegment(parts[0]!, 'tenant', topic),
    namespace: checkSegment(parts[1]!, 'namespace', topic),
    localName: checkSegment(parts[2]!, 'topic', topic),
  };
}

/**
 * The REST path of a topic: `/admin/v2/{domain}/{tenant}/{namespace}/{topic}`, each part
 * percent-encoded.
 *
 * @example
 * topicPath('persistent://t/ns/a b'); // '/admin/v2/persistent/t/ns/a%20b'
 */
export function topicPath(topic: string): string {
  return `/admin/v2/${topicPathSegments(topic)}`;
}

/**
 * The `{domain}/{tenant}/{namespace}/{topic}` part of a topic's REST paths (admin and data API),
 * each part percent-encoded.
 *
 * @example
 * topicPathSegments('t/ns/a b'); // 'persistent/t/ns/a%20b'
 */
export function topicPathSegments(topic: string): string {
  const { domain, tenant, namespace, localName } = parseTopic(topic);
  return `${domain}/${encodeURIComponent(tenant)}/${encodeURIComponent(namespace)}/${encodeURIComponent(localName)}`;
}

/**
 * Splits `tenant/namespace`.
 *
 * @example
 * parseNamespace('my-tenant/my-ns'); // { tenant: 'my-tenant', namespace: 'my-ns' }
 */
export function parseNamespace(namespace: string): { readonly tenant: string; readonly namespace: string } {
  const parts = namespace.split('/');
  if (parts.length !== 2) {
    throw new AcklineAdminArgumentError(`Invalid namespace '${namespace}': expected tenant/namespace`);
  }
  return {
    tenant: checkSegment(parts[0]!, 'tenant', namespace),
    namespace: checkSegment(parts[1]!, 'namespace', namespace),
  };
}

/** The percent-encoded `{tenant}/{namespace}` part of a namespace's REST paths. */
export function namespacePathSegments(namespace: string): string {
  const parts = parseNamespace(namespace);
  return `${encodeURIComponent(parts.tenant)}/${encodeURIComponent(parts.namespace)}`;
}

/**
 * Percent-encodes one path segment (subscription, role). Refuses `.` and `..`, which URL
 * resolution would swallow as dot segments even when encoded.
 */
export function pathSegment(value: string, what: string): string {
  return encodeURIComponent(checkSegment(value, what, value));
}

function checkSegment(segment: string, what: string, input: string): string {
  if (segment.length === 0) {
    throw new AcklineAdminArgumentError(`Invalid ${what} in '${input}': it is empty`);
  }
  if (segment === '.' || segment === '..') {
    throw new AcklineAdminArgumentError(
      `Invalid ${what} in '${input}': '${segment}' cannot be addressed in a URL`,
    );
  }
  return segment;
}
