import { ValidationError } from './errors.ts';
import { isWellFormed, MAX_TOPIC_NAME_BYTES, utf8Bytes } from './name-limits.ts';
import { quote } from './quote.ts';

/** A topic name, or one of its parts, does not follow Pulsar's naming rules. */
export class InvalidTopicNameError extends ValidationError {}

/** Pulsar's topic domains. */
export type TopicDomain = 'persistent' | 'non-persistent';

const TOPIC_DOMAINS: readonly TopicDomain[] = ['persistent', 'non-persistent'];

/** Pulsar's NamedEntity rule for tenants, clusters and namespaces: `^[-=:.\w]+$` (ASCII `\w`). */
const NAMED_ENTITY = /^[-=:.\w]+$/;

// C0 controls, DEL and C1 controls: never part of a name, and they corrupt logs and keys.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

const PARTITION_SUFFIX = '-partition-';
const MAX_PARTITION_INDEX = 2 ** 31 - 1;
const MAX_LONG = 2n ** 63n - 1n;
const PUBLIC_TENANT = 'public';
const DEFAULT_NAMESPACE = 'default';

/** The parts of a topic name, each as it reads in the full name. */
interface TopicNameParts {
  readonly domain: TopicDomain;
  readonly tenant: string;
  /** Only for legacy (v1) names. */
  readonly cluster: string | undefined;
  readonly namespace: string;
  /** The name inside the namespace, with any `-partition-N` suffix. */
  readonly localName: string;
}

/**
 * The path parameters of a legacy (v1) Pulsar admin REST route,
 * `/admin/{domain}/{property}/{cluster}/{namespace}/{encodedTopic}`, as the route received them.
 */
export interface TopicRestPathV1 {
  /** `persistent` or `non-persistent`. */
  readonly domain: string;
  /** The tenant, in v1 terms. */
  readonly property: string;
  readonly cluster: string;
  readonly namespace: string;
  /** The topic part, still URL-encoded (`%XX` escapes, `+` as a space). */
  readonly encodedTopic: string;
}

/**
 * A Pulsar topic name, parsed and validated. Immutable.
 *
 * Accepted forms (as Pulsar's `TopicName.get`, and its `TopicNameTest`):
 * - `persistent://tenant/namespace/topic`, `non-persistent://tenant/namespace/topic`;
 * - legacy (v1) names with a cluster: `persistent://property/cluster/namespace/topic`, whose topic
 *   part may hold `/` (`persistent://p/c/ns/table/1` is the topic `table/1`);
 * - short forms, always persistent: `tenant/namespace/topic` and `topic` alone (in
 *   `public/default`). A short form with a cluster (`p/c/ns/topic`) is refused, as Pulsar does.
 *
 * The topic part is any text without control characters that is not blank: `a:b:c`, `$#3rpa`,
 * `ordres-été`, `x y` are names. A v2 topic part may not hold `/` (its full name would read as a
 * legacy name).
 *
 * A local name ending in `-partition-N` (N a canonical non-negative 32-bit integer) names partition
 * N of the partitioned topic without the suffix. As in Pulsar, other suffixes (`-partition-abc`,
 * `-partition-01`, `-partition--1`, `-partition-0-DLQ`) are part of a plain name; see
 * {@link TopicName.partitionKeywordIndex} for the names Pulsar's admin API still refuses to create.
 *
 * @example
 * const name = TopicName.parse('my-tenant/my-ns/orders-partition-2');
 * name.toString(); // 'persistent://my-tenant/my-ns/orders-partition-2'
 * name.partitionedTopicName.toString(); // 'persistent://my-tenant/my-ns/orders'
 */
export class TopicName {
  readonly domain: TopicDomain;
  readonly tenant: string;
  /** Only for legacy (v1) names. */
  readonly cluster: string | undefined;
  readonly namespace: string;
  /** The name inside the namespace, with any `-partition-N` suffix. */
  readonly localName: string;
  /** The partition index, or -1 when this is not a partition. */
  readonly partitionIndex: number;

  private constructor(parts: TopicNameParts, partitionIndex: number) {
    this.domain = parts.domain;
    this.tenant = parts.tenant;
    this.cluster = parts.cluster;
    this.namespace = parts.namespace;
    this.localName = parts.localName;
    this.partitionIndex = partitionIndex;
  }

  /** The parts this name was built from (a copy: the name stays immutable). */
  private get parts(): TopicNameParts {
    return {
      domain: this.domain,
      tenant: this.tenant,
      cluster: this.cluster,
      namespace: this.namespace,
      localName: this.localName,
    };
  }

  /**
   * Parses a topic name in any of the accepted forms.
   * @throws InvalidTopicNameError naming the offending part and quoting the input.
   */
  static parse(name: string): TopicName {
    if (typeof name !== 'string' || name.length === 0) {
      throw new InvalidTopicNameError(`Invalid topic name ${quote(name)}: it is empty`);
    }
    if (CONTROL_CHARACTER.test(name)) {
      throw new InvalidTopicNameError(`Invalid topic name ${quote(name)}: it contains a control character`);
    }
    const separator = name.indexOf('://');
    let domainText = 'persistent';
    let rest = name;
    if (separator >= 0) {
      domainText = name.slice(0, separator);
      rest = name.slice(separator + 3);
    }
    const domain = parseDomain(domainText, name);
    const parts = rest.split('/');
    if (separator < 0 && parts.length === 1) {
      return TopicName.build(name, {
        domain,
        tenant: PUBLIC_TENANT,
        cluster: undefined,
        namespace: DEFAULT_NAMESPACE,
        localName: parts[0]!,
      });
    }
    if (parts.length === 3) {
      return TopicName.build(name, {
        domain,
        tenant: parts[0]!,
        cluster: undefined,
        namespace: parts[1]!,
        localName: parts[2]!,
      });
    }
    if (separator >= 0 && parts.length >= 4) {
      // Pulsar splits at most 4 ways: the legacy topic part keeps any further '/'.
      return TopicName.build(name, {
        domain,
        tenant: parts[0]!,
        cluster: parts[1]!,
        namespace: parts[2]!,
        localName: parts.slice(3).join('/'),
      });
    }
    const expected =
      separator < 0
        ? 'tenant/namespace/topic or topic (a name with a cluster needs persistent:// or non-persistent://)'
        : `${domainText}://tenant/namespace/topic or ${domainText}://property/cluster/namespace/topic`;
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(name)}: expected ${expected} (found ${parts.length} '/'-separated parts)`,
    );
  }

  /**
   * Builds a topic name from the path parameters of a Pulsar admin REST route
   * (`/admin/v2/{domain}/{tenant}/{namespace}/{topic}`), URL-decoding the topic as Pulsar does
   * (`%XX` escapes, and `+` as a space).
   * @throws InvalidTopicNameError naming the offending part.
   */
  static fromRest(domain: string, tenant: string, namespace: string, encodedTopic: string): TopicName {
    const display = `${domain}/${tenant}/${namespace}/${encodedTopic}`;
    return TopicName.build(display, {
      domain: parseDomain(domain, display),
      tenant,
      cluster: undefined,
      namespace,
      localName: decodeTopic(encodedTopic, display),
    });
  }

  /**
   * As {@link TopicName.fromRest} for the legacy v1 routes
   * (`/admin/{domain}/{property}/{cluster}/{namespace}/{topic}`).
   * @example
   * TopicName.fromRestV1({ domain: 'persistent', property: 'p', cluster: 'c', namespace: 'ns', encodedTopic: 'a%20b' });
   * // persistent://p/c/ns/a b
   */
  static fromRestV1(path: TopicRestPathV1): TopicName {
    const { domain, property, cluster, namespace, encodedTopic } = path;
    const display = `${domain}/${property}/${cluster}/${namespace}/${encodedTopic}`;
    return TopicName.build(display, {
      domain: parseDomain(domain, display),
      tenant: property,
      cluster,
      namespace,
      localName: decodeTopic(encodedTopic, display),
    });
  }

  /**
   * Validates the parts and builds the name.
   * @param input the text the parts came from, quoted in errors.
   */
  private static build(input: string, parts: TopicNameParts): TopicName {
    const { tenant, cluster, namespace, localName } = parts;
    checkNamedEntity(tenant, 'tenant', input);
    if (cluster !== undefined) {
      checkNamedEntity(cluster, 'cluster', input);
    }
    checkNamedEntity(namespace, 'namespace', input);
    if (localName.length === 0) {
      throw new InvalidTopicNameError(`Invalid topic name ${quote(input)}: the topic part is empty`);
    }
    if (localName.trim().length === 0) {
      throw new InvalidTopicNameError(`Invalid topic name ${quote(input)}: the topic part is blank`);
    }
    if (cluster === undefined && localName.includes('/')) {
      throw new InvalidTopicNameError(
        `Invalid topic name ${quote(input)}: the topic part ${quote(localName)} contains '/' (only a legacy name with a cluster may)`,
      );
    }
    if (CONTROL_CHARACTER.test(localName)) {
      throw new InvalidTopicNameError(
        `Invalid topic name ${quote(input)}: the topic part ${quote(localName)} contains a control character`,
      );
    }
    const partitionIndex = parsePartitionIndex(localName, input);
    const name = new TopicName(parts, partitionIndex);
    checkNameLimits(name.toString(), input);
    return name;
  }

  /**
   * The v2 name (`domain://tenant/namespace/topic`) of a legacy name: the cluster dropped.
   * @throws InvalidTopicNameError when the topic part holds `/`, which a v2 name cannot.
   */
  withoutCluster(): TopicName {
    if (this.cluster === undefined) return this;
    return TopicName.build(this.toString(), { ...this.parts, cluster: undefined });
  }

  /**
   * Pulsar's admin rule for creating a non-partitioned topic whose name holds `-partition-`
   * (`PersistentTopicsBase.validateNonPartitionTopicNameAsync`): when the text after the *first*
   * `-partition-` reads as a number (Java's `Long.parseLong`: an optional sign, ASCII digits,
   * 64 bits), the name may be created only while the topic before it is partitioned with more
   * partitions than that number. `tp1-partition-0-DLQ` and `a-partition-x` hold no such number
   * (undefined); `a-partition-00`, `a-partition-+1`, `a-partition--1` and `a-partition-3` do.
   *
   * @returns the partitioned topic the number points at (undefined when the text before
   *   `-partition-` is empty) and the number; undefined when the name holds no such number.
   */
  get partitionKeywordIndex():
    | { readonly partitionedTopic: TopicName | undefined; readonly index: bigint }
    | undefined {
    const at = this.localName.indexOf(PARTITION_SUFFIX);
    if (at < 0) return undefined;
    const text = this.localName.slice(at + PARTITION_SUFFIX.length);
    if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
    const index = BigInt(text);
    if (index > MAX_LONG || index < -MAX_LONG - 1n) return undefined;
    const baseName = this.localName.slice(0, at);
    let partitionedTopic: TopicName | undefined;
    try {
      partitionedTopic = TopicName.build(this.toString(), { ...this.parts, localName: baseName });
    } catch {
      // An empty or blank text before '-partition-' names no topic, partitioned or not.
      partitionedTopic = undefined;
    }
    return { partitionedTopic, index };
  }

  /** `tenant/namespace`, or `property/cluster/namespace` for a legacy name. */
  get namespaceName(): string {
    return this.cluster === undefined
      ? `${this.tenant}/${this.namespace}`
      : `${this.tenant}/${this.cluster}/${this.namespace}`;
  }

  get isPersistent(): boolean {
    return this.domain === 'persistent';
  }

  /** True when this names one partition (`...-partition-N`) of a partitioned topic. */
  get isPartition(): boolean {
    return this.partitionIndex >= 0;
  }

  /** The partitioned topic this partition belongs to; the topic itself when it is not a partition. */
  get partitionedTopicName(): TopicName {
    if (!this.isPartition) {
      return this;
    }
    const base = this.localName.slice(0, this.localName.lastIndexOf(PARTITION_SUFFIX));
    return new TopicName({ ...this.parts, localName: base }, -1);
  }

  /**
   * Partition `index` of this topic (of its partitioned topic, when this is already a partition).
   * @throws InvalidTopicNameError when `index` is not an integer in 0..2^31-1.
   */
  partition(index: number): TopicName {
    if (!Number.isInteger(index) || index < 0 || index > MAX_PARTITION_INDEX) {
      throw new InvalidTopicNameError(
        `Invalid partition index ${quote(index)} for topic ${quote(this.toString())}: expected an integer between 0 and ${MAX_PARTITION_INDEX}`,
      );
    }
    const base = this.partitionedTopicName;
    const partition = new TopicName(
      { ...base.parts, localName: `${base.localName}${PARTITION_SUFFIX}${index}` },
      index,
    );
    checkNameLimits(partition.toString(), partition.toString());
    return partition;
  }

  /**
   * The path of this topic in Pulsar's admin REST API, local name URL-encoded:
   * `persistent/tenant/namespace/topic` (with the cluster for legacy names).
   */
  get restPath(): string {
    const encoded = encodeURIComponent(this.localName);
    return this.cluster === undefined
      ? `${this.domain}/${this.tenant}/${this.namespace}/${encoded}`
      : `${this.domain}/${this.tenant}/${this.cluster}/${this.namespace}/${encoded}`;
  }

  equals(other: TopicName): boolean {
    return this.toString() === other.toString();
  }

  /** The complete name, e.g. `persistent://tenant/ns/topic-partition-2`. */
  toString(): string {
    return `${this.domain}://${this.namespaceName}/${this.localName}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** The limits of name-limits.ts, with the reason in the error. */
function checkNameLimits(full: string, input: string): void {
  if (!isWellFormed(full)) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: it contains a lone surrogate (not valid Unicode)`,
    );
  }
  const bytes = utf8Bytes(full);
  if (bytes > MAX_TOPIC_NAME_BYTES) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: ${bytes} bytes in UTF-8, at most ${MAX_TOPIC_NAME_BYTES} are allowed (the name is part of DynamoDB keys, with partition suffixes and subscription names)`,
    );
  }
}

function parseDomain(text: string, input: string): TopicDomain {
  const domain = TOPIC_DOMAINS.find((candidate) => candidate === text);
  if (domain === undefined) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: unknown domain ${quote(text)} (expected persistent or non-persistent)`,
    );
  }
  return domain;
}

function checkNamedEntity(value: string, part: string, input: string): void {
  if (value.length === 0) {
    throw new InvalidTopicNameError(`Invalid topic name ${quote(input)}: the ${part} is empty`);
  }
  if (!NAMED_ENTITY.test(value)) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: the ${part} ${quote(value)} may contain only letters, digits, '_', '-', '=', ':' and '.'`,
    );
  }
}

function parsePartitionIndex(localName: string, input: string): number {
  const at = localName.lastIndexOf(PARTITION_SUFFIX);
  if (at < 0) {
    return -1;
  }
  const suffix = localName.slice(at + PARTITION_SUFFIX.length);
  // Canonical digits only, as Pulsar's getPartitionIndex: '01', '+1' or '-1' keep the name plain.
  if (!/^(0|[1-9][0-9]*)$/.test(suffix)) {
    return -1;
  }
  const index = Number(suffix);
  if (index > MAX_PARTITION_INDEX) {
    return -1;
  }
  if (at === 0) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: partition ${index} of a topic with an empty name`,
    );
  }
  return index;
}

function decodeTopic(encodedTopic: string, input: string): string {
  try {
    return decodeURIComponent(encodedTopic.replaceAll('+', ' '));
  } catch (error) {
    throw new InvalidTopicNameError(
      `Invalid topic name ${quote(input)}: the topic part ${quote(encodedTopic)} is not valid URL encoding`,
      { cause: error },
    );
  }
}
