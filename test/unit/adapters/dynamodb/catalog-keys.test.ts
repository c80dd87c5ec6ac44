// Stored keys are collision-free by construction (issue 12, criterion 3): over names drawn from
// every character Pulsar allows (tenants, clusters and namespaces: [-=:.\w]; topic local names
// and subscription names: anything but '/' and control characters), distinct entities never
// share a Catalog key, and names at their limits give keys within DynamoDB's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACTIVITY_SHARDS,
  activityShard,
  type CatalogKey,
  catalogKeys,
} from '../../../../shared/adapters/dynamodb/catalog-keys.ts';
import { subscriptionKey } from '../../../../shared/application/consumers/consumer-session.ts';
import {
  MAX_SUBSCRIPTION_NAME_BYTES,
  MAX_SUBSCRIPTION_NAME_CHARS,
  MAX_TOPIC_NAME_BYTES,
} from '../../../../shared/domain/name-limits.ts';
import { validateSubscriptionName } from '../../../../shared/domain/subscription-name.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';

/** Characters that make near-collisions likely: separators of every encoding, and the rest of Pulsar's set. */
const TRICKY = [
  '|',
  '#',
  '"',
  '\\',
  ':',
  '=',
  '.',
  '-',
  '_',
  '[',
  ']',
  ',',
  ' ',
  '%',
  '+',
  'T',
  'S',
  'M',
  'a',
  'ü',
  '😀',
];
const NAMED_ENTITY_CHARS = [...'-=:._aZ09'];

const namedEntity = fc.string({ unit: fc.constantFrom(...NAMED_ENTITY_CHARS), minLength: 1, maxLength: 4 });
/** Any character a local or subscription name may hold: tricky ones often, any code point sometimes. */
const nameChar = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TRICKY, '-partition-', '-partition-1', '","', 'T#', 'S#') },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 1 })
      .filter((c) => !/[\p{Cc}/]/u.test(c)),
  },
);
const freeName = fc.array(nameChar, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));

const topicName = fc
  .record({
    domain: fc.constantFrom('persistent', 'non-persistent'),
    tenant: namedEntity,
    cluster: fc.option(namedEntity, { nil: undefined }),
    namespace: namedEntity,
    local: freeName,
  })
  .map(({ domain, tenant, cluster, namespace, local }) => {
    try {
      return TopicName.parse(
        `${domain}://${tenant}/${cluster === undefined ? '' : `${cluster}/`}${namespace}/${local}`,
      );
    } catch {
      return undefined; // e.g. a negative partition index: not a name Pulsar accepts
    }
  })
  // As createTopic requires: '-partition-' only as a partition's own suffix.
  .filter(
    (name): name is TopicName =>
      name !== undefined &&
      !name.partitionedTopicName.localName.includes('-partition-') &&
      // A partition of a blank name (' -partition-0') names no topic.
      name.partitionedTopicName.localName.trim() !== '',
  );

type Entity =
  | { kind: 'topic'; topic: string }
  | { kind: 'subscription'; partition: string; name: string }
  | { kind: 'ledgerState'; partition: string }
  | { kind: 'closedLedger'; partition: string; ledgerId: bigint }
  | { kind: 'membership'; topic: string; name: string; consumerId: string }
  | { kind: 'permission'; resource: string; role: string }
  | { kind: 'audit'; topic: string; atMs: number; requestId: string }
  | { kind: 'auditExpiry'; day: number; topic: string };

const entity: fc.Arbitrary<Entity> = fc.oneof(
  topicName.map((t): Entity => ({ kind: 'topic', topic: t.toString() })),
  fc
    .tuple(topicName, freeName)
    .map(([t, name]): Entity => ({ kind: 'subscription', partition: t.toString(), name })),
  topicName.map((t): Entity => ({ kind: 'ledgerState', partition: t.toString() })),
  fc
    .tuple(topicName, fc.constantFrom(0n, 1n, 10n, 2n ** 63n - 1n))
    .map(([t, ledgerId]): Entity => ({ kind: 'closedLedger', partition: t.toString(), ledgerId })),
  fc.tuple(topicName, freeName, fc.constantFrom('c1', 'c2')).map(
    ([t, name, consumerId]): Entity => ({
      kind: 'membership',
      topic: t.partitionedTopicName.toString(),
      name,
      consumerId,
    }),
  ),
  fc
    .tuple(
      fc.oneof(
        topicName.map(String),
        fc.tuple(namedEntity, namedEntity).map(([a, b]) => `${a}/${b}`),
      ),
      freeName,
    )
    .map(([resource, role]): Entity => ({ kind: 'permission', resource, role })),
  fc
    .tuple(topicName, fc.constantFrom(0, 1, 10, 1_700_000_000_000), freeName)
    .map(([t, atMs, requestId]): Entity => ({ kind: 'audit', topic: t.toString(), atMs, requestId })),
  fc
    .tuple(fc.constantFrom(1, 19_700, 200_000), topicName)
    .map(([day, t]): Entity => ({ kind: 'auditExpiry', day, topic: t.toString() })),
);

function keyOf(e: Entity): CatalogKey {
  switch (e.kind) {
    case 'topic':
      return catalogKeys.topic(TopicName.parse(e.topic));
    case 'subscription':
      return catalogKeys.subscription(TopicName.parse(e.partition), e.name);
    case 'ledgerState':
      return catalogKeys.ledgerState(TopicName.parse(e.partition));
    case 'closedLedger':
      return catalogKeys.closedLedger(TopicName.parse(e.partition), e.ledgerId);
    case 'membership':
      return catalogKeys.membership(subscriptionKey(e.topic, e.name), e.consumerId);
    case 'permission':
      return catalogKeys.permission(e.resource, e.role);
    case 'audit':
      return catalogKeys.audit(e.topic, e.atMs, e.requestId);
    case 'auditExpiry':
      return catalogKeys.auditExpiry(e.day, e.topic);
  }
}

/** Recovers the entity from its key: what makes every encoding injective. */
function decode(key: CatalogKey): Entity {
  const { pk, sk } = key;
  if (pk.startsWith('NS#')) return { kind: 'topic', topic: `${pk.slice(3)}/${sk.slice(2)}` };
  if (pk.startsWith('ML#')) {
    if (sk === 'M') return { kind: 'ledgerState', partition: pk.slice(3) };
    if (sk.startsWith('L#'))
      return { kind: 'closedLedger', partition: pk.slice(3), ledgerId: BigInt(sk.slice(2)) };
    return { kind: 'subscription', partition: pk.slice(3), name: sk.slice(2) };
  }
  if (pk.startsWith('MEM#')) {
    const [topic, name] = JSON.parse(pk.slice(4)) as [string, string];
    return { kind: 'membership', topic, name, consumerId: sk };
  }
  if (pk.startsWith('PERM#')) return { kind: 'permission', resource: pk.slice(5), role: sk };
  if (pk.startsWith('AUDIT#')) {
    return { kind: 'audit', topic: pk.slice(6), atMs: Number(sk.slice(0, 15)), requestId: sk.slice(16) };
  }
  if (pk === 'AUDX') return { kind: 'auditExpiry', day: Number(sk.slice(0, 6)), topic: sk.slice(7) };
  throw new Error(`unknown key ${pk}`);
}

/** An entity as text, to tell equal ones apart from distinct ones (ledger ids are bigints). */
const textOf = (e: Entity) =>
  JSON.stringify(e, (_, value) => (typeof value === 'bigint' ? `${value}n` : value));
const same = (a: CatalogKey, b: CatalogKey) => a.pk === b.pk && a.sk === b.sk;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('Catalog keys', () => {
  it('distinct entities never share a key (names from every character Pulsar allows)', () => {
    fc.assert(
      fc.property(entity, entity, (a, b) => {
        if (textOf(a) === textOf(b)) return true;
        return !same(keyOf(a), keyOf(b));
      }),
      { numRuns: 20_000 },
    );
  });

  it('every key decodes back to its entity (a left inverse: injective by construction)', () => {
    fc.assert(
      fc.property(entity, (e) => {
        expect(decode(keyOf(e))).toEqual(e);
      }),
      { numRuns: 20_000 },
    );
  });

  it('the decoding property has teeth: a membership key joining topic and subscription with "|" fails it', () => {
    const joined = (topic: string, name: string) => `MEM#${topic}|${name}`;
    const split = (pk: string) => {
      const rest = pk.slice(4);
      const at = rest.indexOf('|');
      return [rest.slice(0, at), rest.slice(at + 1)];
    };
    const result = fc.check(
      fc.property(topicName, freeName, (topic, name) => {
        const [t, n] = split(joined(topic.toString(), name));
        return t === topic.toString() && n === name;
      }),
      { numRuns: 20_000 },
    );
    expect(result.failed).toBe(true);
  });

  it('names at their limits, of the characters that grow most when encoded, give keys within DynamoDB limits', () => {
    // '"' doubles in JSON; a 4-byte character is the most bytes per character.
    const prefix = 'persistent://t/n/';
    const local = '"'.repeat(MAX_TOPIC_NAME_BYTES - prefix.length - '-partition-999'.length);
    const partition = TopicName.parse(`${prefix}${local}`).partition(999);
    expect(bytes(partition.toString())).toBe(MAX_TOPIC_NAME_BYTES);
    const names = [
      '"'.repeat(MAX_SUBSCRIPTION_NAME_BYTES / 2),
      '😀'.repeat(MAX_SUBSCRIPTION_NAME_BYTES / 4),
      'a'.repeat(MAX_SUBSCRIPTION_NAME_CHARS),
    ];
    for (const name of names) {
      validateSubscriptionName(name);
      const keys = [
        catalogKeys.topic(partition.partitionedTopicName),
        catalogKeys.subscription(partition, name),
        catalogKeys.ledgerState(partition),
        catalogKeys.closedLedger(partition, 2n ** 63n - 1n),
        catalogKeys.membership(subscriptionKey(partition.toString(), name), 'x'.repeat(22)),
        catalogKeys.permission(partition.toString(), name),
        catalogKeys.audit(partition.toString(), 1_700_000_000_000, 'r'.repeat(64)),
        catalogKeys.auditExpiry(19_999, partition.toString()),
      ];
      for (const key of keys) {
        expect(bytes(key.pk), key.pk.slice(0, 40)).toBeLessThanOrEqual(2_048);
        expect(bytes(key.sk), key.sk.slice(0, 40)).toBeLessThanOrEqual(1_024);
      }
    }
  });

  it.each([
    [
      'a topic name one byte past the limit',
      () => TopicName.parse(`t/n/${'x'.repeat(MAX_TOPIC_NAME_BYTES)}`),
      /at most 500 are allowed/,
    ],
    [
      'a partition name past the limit',
      () => TopicName.parse(`persistent://t/n/${'x'.repeat(470)}`).partition(12345),
      /at most 500/,
    ],
    ['a lone surrogate in a topic name', () => TopicName.parse('t/n/a\uD800b'), /lone surrogate/],
    [
      'a subscription name of 257 characters',
      () => validateSubscriptionName('s'.repeat(257)),
      /257 characters, at most 256/,
    ],
    [
      'a subscription name of 513 bytes',
      () => validateSubscriptionName(`${`${'ü'.repeat(256)}`.slice(0, 255)}😀`),
      /bytes in UTF-8, at most 512/,
    ],
    ['a lone surrogate in a subscription name', () => validateSubscriptionName('a\uDC00'), /lone surrogate/],
  ])('refuses %s, with the reason', (_, build, reason) => {
    expect(build).toThrow(reason);
  });

  it('files an activity entry under one of 16 fixed-width shards by its cursor id, never the seed flag', () => {
    const cursorIds = Array.from({ length: 1_600 }, (_, i) => `c${i}AbCdEfGhIjKlMnOpQrStU`);
    const perShard = new Map<string, number>();
    for (const cursorId of cursorIds) {
      const { pk, sk } = catalogKeys.activity(cursorId);
      expect(sk).toBe(cursorId);
      expect(pk).toBe(`ACT#${activityShard(cursorId).toString().padStart(2, '0')}`);
      perShard.set(pk, (perShard.get(pk) ?? 0) + 1);
    }

    expect([...perShard.keys()].sort()).toEqual(
      Array.from({ length: ACTIVITY_SHARDS }, (_, i) => `ACT#${i.toString().padStart(2, '0')}`),
    );
    // About 100 each (FNV-1a is not a cryptographic hash, but spreads these well).
    expect(Math.min(...perShard.values())).toBeGreaterThan(60);
    expect(catalogKeys.activity('AbCdEfGhIjKlMnOpQrStUv')).toEqual(
      catalogKeys.activity('AbCdEfGhIjKlMnOpQrStUv'),
    );
  });
});
