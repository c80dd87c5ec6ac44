/**
 * Hot keys: how fast one topic partition could go on AWS before a single DynamoDB partition key
 * or a single compare-and-set item stops it, from what one lifecycle run spent per key.
 *
 * - Per partition key k, w(k) and r(k) are its write and read units per acknowledged message;
 *   DynamoDB serves at most 1,000 write units and 3,000 read units a second per partition, and
 *   one partition key's items stay in one partition whatever their load, so
 *   T_units(k) = min(1,000 / w(k), 3,000 / r(k)) messages a second. No credit for adaptive
 *   capacity: it may isolate a hot key on a partition of its own, never past those limits.
 * - Per item updated by compare-and-set (the dispatch head, an ack page), every committed update
 *   is a read and a write one after the other: T_cas = m × (1 − c) × 1,000 / (L_read + L_write),
 *   m the messages per committed update, c the share of attempts refused, L = 10 ms a call (an
 *   assumption about AWS, not a figure of the emulator).
 * - The ceiling is the smallest of them; the key that sets it is named by its role.
 *
 * Sources and the design's answer: docs/design/aws-limits.md#hot-keys.
 */
import type { CompareAndSetUsage, KeyUsage, Units } from '../shared/adapters/dynamodb/partition-key-meter.ts';
import type { UsageSnapshot } from '../shared/adapters/usage-meter.ts';

/** DynamoDB's throughput limits of one partition, and the latency assumed of one call. */
export const PARTITION_LIMITS = {
  writeUnitsPerSecond: 1_000,
  readUnitsPerSecond: 3_000,
  callLatencyMs: 10,
} as const;

/** How many keys the report lists. */
export const HOTTEST_SHOWN = 5;

/** One compare-and-set item and the throughput its serialisation allows. */
export interface CompareAndSetCeiling {
  readonly role: string;
  readonly sortKey: string;
  readonly committed: number;
  readonly refused: number;
  /** m: acknowledged messages per committed update. */
  readonly messagesPerUpdate: number;
  /** c: refused attempts over all attempts. */
  readonly refusedShare: number;
  /** T_cas, messages/s. */
  readonly messagesPerSecond: number;
}

/** One partition key: its units per message and the throughput its limits allow. */
export interface HotKey {
  readonly table: string;
  readonly partitionKey: string;
  /** What the key holds, by role ("entries of ledger 12"). */
  readonly role: string;
  /** w(k) */
  readonly writeUnitsPerMessage: number;
  /** r(k) */
  readonly readUnitsPerMessage: number;
  /** Units per message by kind of item (sort key prefix). */
  readonly byItemKind: Record<string, Units>;
  /** T_units(k), messages/s (null: the key spent nothing per message). */
  readonly unitsMessagesPerSecond: number | null;
  /** The key's most limiting compare-and-set item, if it has any. */
  readonly compareAndSet?: CompareAndSetCeiling;
  /** The smaller of T_units and T_cas (null: neither bounds it). */
  readonly messagesPerSecond: number | null;
}

export interface HotKeys {
  readonly messages: number;
  readonly limits: typeof PARTITION_LIMITS;
  /** Every key touched, the most limiting first. */
  readonly keys: HotKey[];
  readonly ceiling: {
    readonly messagesPerSecond: number | null;
    /** The role of the key that sets it, and what of it: `units` or `compare-and-set`. */
    readonly role: string;
    readonly by: 'units' | 'compare-and-set' | 'none';
  };
}

/** The hot keys of one run that acknowledged `messages` messages. */
export function hotKeysOf(usage: UsageSnapshot, messages: number): HotKeys {
  const compareAndSets = usage.compareAndSets ?? [];
  const keys = (usage.keys ?? [])
    .map((key) => hotKey(key, compareAndSets, messages))
    .sort((a, b) => (a.messagesPerSecond ?? Infinity) - (b.messagesPerSecond ?? Infinity));
  const bound = keys[0];
  const limit = bound?.messagesPerSecond ?? null;
  return {
    messages,
    limits: PARTITION_LIMITS,
    keys,
    ceiling: {
      messagesPerSecond: limit,
      role: bound && limit !== null ? bound.role : '-',
      by:
        bound === undefined || limit === null
          ? 'none'
          : bound.compareAndSet?.messagesPerSecond === limit
            ? 'compare-and-set'
            : 'units',
    },
  };
}

function hotKey(key: KeyUsage, compareAndSets: readonly CompareAndSetUsage[], messages: number): HotKey {
  const w = key.writeCapacityUnits / messages;
  const r = key.readCapacityUnits / messages;
  const units = Math.min(
    w > 0 ? PARTITION_LIMITS.writeUnitsPerSecond / w : Infinity,
    r > 0 ? PARTITION_LIMITS.readUnitsPerSecond / r : Infinity,
  );
  const items = compareAndSets
    .filter((item) => item.table === key.table && item.partitionKey === key.partitionKey)
    .flatMap((item) => compareAndSetCeiling(item, messages) ?? [])
    .sort((a, b) => a.messagesPerSecond - b.messagesPerSecond);
  const cas = items[0];
  const both = Math.min(units, cas?.messagesPerSecond ?? Infinity);
  return {
    table: key.table,
    partitionKey: key.partitionKey,
    role: roleOf(key.table, key.partitionKey, Object.keys(key.byItemKind)),
    writeUnitsPerMessage: w,
    readUnitsPerMessage: r,
    byItemKind: Object.fromEntries(
      Object.entries(key.byItemKind).map(([kind, u]) => [
        kind,
        {
          readCapacityUnits: u.readCapacityUnits / messages,
          writeCapacityUnits: u.writeCapacityUnits / messages,
        },
      ]),
    ),
    unitsMessagesPerSecond: Number.isFinite(units) ? units : null,
    ...(cas ? { compareAndSet: cas } : {}),
    messagesPerSecond: Number.isFinite(both) ? both : null,
  };
}

/** T_cas of one item; none for an item with no committed update (nothing to divide by). */
export function compareAndSetCeiling(
  item: CompareAndSetUsage,
  messages: number,
): CompareAndSetCeiling | undefined {
  if (item.committed === 0) return undefined;
  const m = messages / item.committed;
  const c = item.refused / (item.committed + item.refused);
  const perSecond = (1_000 / (2 * PARTITION_LIMITS.callLatencyMs)) * m * (1 - c);
  return {
    role: itemRoleOf(item),
    sortKey: item.sortKey,
    committed: item.committed,
    refused: item.refused,
    messagesPerUpdate: m,
    refusedShare: c,
    messagesPerSecond: perSecond,
  };
}

const CURSOR_ITEMS: Record<string, string> = {
  H: 'head',
  'P#': 'ack pages',
  'R#': 'redelivery tracker',
  S: 'counters',
  query: 'queries',
};
const PARTITION_ITEMS: Record<string, string> = {
  M: 'state',
  'S#': 'subscriptions',
  'L#': 'closed ledgers',
  query: 'queries',
};

/** A key named by what it holds; names shortened (a topic to its local name, an id to 8 characters). */
export function roleOf(table: string, partitionKey: string, kinds: readonly string[] = []): string {
  const holding = (names: Record<string, string>) => {
    const listed = [...new Set(kinds.map((kind) => names[kind] ?? kind))];
    return listed.length > 0 ? ` (${listed.join(', ')})` : '';
  };
  if (table === 'Entries') return `entries of ledger ${partitionKey}`;
  if (table === 'Cursors') return `cursor ${short(partitionKey)}${holding(CURSOR_ITEMS)}`;
  if (table !== 'Catalog') return `${table} ${short(partitionKey)}`;
  const [prefix = '', rest = ''] = /^([A-Z]+#?)(.*)$/.exec(partitionKey)?.slice(1) ?? [];
  const catalog: Record<string, () => string> = {
    'ML#': () => `partition state of ${localName(rest)}${holding(PARTITION_ITEMS)}`,
    ACT: () => 'activity index ACT (before its shards)',
    'ACT#': () => (rest === 'seeded' ? 'activity index seed flag' : `activity index shard ACT#${rest}`),
    'MEM#': () => `memberships of ${subscriptionOf(rest)}`,
    'CONS#': () => `consumer ${short(rest)}`,
    'C#': () => `${rest} counter (deployment-wide)`,
    'L#': () => `ledger index of ledger ${rest}`,
    'NS#': () => `topics of namespace ${rest.replace(/^.*:\/\//, '')}`,
    'KEY#': () => `${rest} key`,
    'PERM#': () => `permissions of ${localName(rest)}`,
    'AUDIT#': () => `audit log of ${localName(rest)}`,
    AUDX: () => 'audit expiry markers AUDX',
    DJ: () => 'deletion jobs DJ',
  };
  return catalog[prefix]?.() ?? `Catalog ${short(partitionKey)}`;
}

/** A compare-and-set item named by its role. */
function itemRoleOf(item: CompareAndSetUsage): string {
  if (item.table === 'Cursors' && item.sortKey === 'H')
    return `dispatch head of cursor ${short(item.partitionKey)}`;
  if (item.table === 'Cursors' && item.sortKey.startsWith('P#'))
    return `ack page ${item.sortKey.replace(/#0+(?=\d)/g, '#')} of cursor ${short(item.partitionKey)}`;
  return `${roleOf(item.table, item.partitionKey)}, item ${item.sortKey}`;
}

function short(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

function localName(topic: string): string {
  return topic.replace(/^.*\//, '');
}

/** `MEM#` keys hold the JSON of [base topic, subscription]. */
function subscriptionOf(json: string): string {
  try {
    const [topic, subscription] = JSON.parse(json) as [string, string];
    return `${localName(topic)}/${subscription}`;
  } catch {
    return short(json);
  }
}

/** The hottest keys as a Markdown table, then the ceiling and what sets it. */
export function hotKeysLines(hot: HotKeys, shown = HOTTEST_SHOWN): string[] {
  const rate = (n: number | null | undefined) => (n === null || n === undefined ? '-' : n.toFixed(0));
  const lines = [
    '| key (table: role) | w, write units/msg | r, read units/msg | T_units, msg/s | compare-and-set item: m msg/update, c refused | T_cas, msg/s |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const key of hot.keys.slice(0, shown)) {
    const cas = key.compareAndSet;
    lines.push(
      `| ${key.table}: ${key.role} | ${key.writeUnitsPerMessage.toFixed(4)} | ${key.readUnitsPerMessage.toFixed(4)} | ${rate(key.unitsMessagesPerSecond)} | ${cas ? `${cas.role}: m ${cas.messagesPerUpdate.toFixed(2)}, c ${cas.refusedShare.toFixed(3)}` : '-'} | ${rate(cas?.messagesPerSecond)} |`,
    );
  }
  const { ceiling } = hot;
  lines.push(
    '',
    `**Ceiling: ${rate(ceiling.messagesPerSecond)} messages/s** per topic partition, set by ${ceiling.role} (${ceiling.by === 'compare-and-set' ? 'T_cas' : ceiling.by === 'units' ? 'T_units' : 'nothing'}); ${hot.keys.length} keys touched, ${hot.messages} messages.`,
  );
  return lines;
}
