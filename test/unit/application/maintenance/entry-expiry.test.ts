// Entry expiry (issue 22, criterion 6; docs/design/storage.md#entry-expiry) over in-memory ports and
// a manual clock: retention under the 0/0 default only moves the first kept position, DynamoDB's
// TTL (InMemoryLedgerTables.deleteExpired stands in for it) deletes what expired, and maintenance
// renews the expiry of whatever is still kept, so nothing a subscription has not acknowledged, and
// nothing a retention policy keeps, is ever deleted.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { enforcePolicies } from '../../../../shared/application/maintenance/enforce-policies.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import { setRetention } from '../../../../shared/application/tenancy/manage-policies.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { getMessageById } from '../../../../shared/application/topics/read-messages.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import { PUBLISH_ORDER_SLACK_MS } from '../../../../shared/domain/entry-expiry.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDelayedIndex } from '../../../support/in-memory-delayed-index.ts';
import { InMemoryLedger, InMemoryLedgerTables } from '../../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import { consumeAll, publishPayloads, sharedEarliestConsumer } from '../../../support/use-case-steps.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;
const DAY_MS = 86_400_000;
const EXPIRY_MS = 14 * DAY_MS;

function world() {
  const clock = new ManualClock(T0);
  const tables = new InMemoryLedgerTables();
  const delayedIndex = new InMemoryDelayedIndex();
  const ledger = new InMemoryLedger(1000, tables, delayedIndex, {
    clock,
    expireEntries: true,
    entryExpiryMs: EXPIRY_MS,
  });
  const { ports } = inMemoryPorts({
    clock,
    ledger,
    delayedIndex,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  // As the maintenance handler: the fold, then the policies (retention, then expiry renewal).
  const run = async () => {
    const { activePartitions } = await maintainSubscriptions(ports, { deadlineMs: clock.nowMs() + 60_000 });
    return enforcePolicies(ports, { deadlineMs: clock.nowMs() + 60_000, activePartitions });
  };
  /** Time passes: maintenance every `everyMs`, and DynamoDB's TTL deletes what expired. */
  const live = async (forMs: number, everyMs: number) => {
    const totals = { renewed: 0, expired: 0, ttlDeleted: 0 };
    for (let elapsed = 0; elapsed < forMs; elapsed += everyMs) {
      clock.advance(everyMs);
      const summary = await run();
      totals.renewed += summary.renewedBatches;
      totals.expired += summary.expiredBatches;
      totals.ttlDeleted += tables.deleteExpired(clock.nowMs());
    }
    return totals;
  };
  return { clock, ports, ledger, tables, run, live };
}

async function receiveAll(ports: ReturnType<typeof world>['ports'], consumerId: string): Promise<string[]> {
  const payloads: string[] = [];
  for (;;) {
    const batch = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });
    if (batch.length === 0) return payloads;
    payloads.push(...batch.map((message) => message.payload));
  }
}

describe('entry expiry under the default retention (0/0)', () => {
  it('lets go what every subscription acknowledged without deleting it; the TTL deletes it at its expiry', async () => {
    const { clock, ports, tables, run } = world();
    const topic = TopicName.parse('persistent://tenant/ns/consumed');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await publishPayloads(ports, admin, topic, ['a', 'b', 'c', 'd']);
    clock.advance(1_000);
    await consumeAll(ports, admin, consumerId);

    expect(await run()).toMatchObject({ trimmedEntries: 4, trimmedBytes: 4 });

    // Still stored (no delete was billed), never read again: below the first kept position.
    expect(tables.entries.size).toBe(4);
    const stats = await getTopicStats(ports, admin, topic);
    expect(stats.storageSize).toBe(0);
    for (const entry of tables.entries.values()) {
      await expect(getMessageById(ports, admin, topic, entry.position)).rejects.toThrow(/not found/);
    }
    expect(tables.deleteExpired(T0 + EXPIRY_MS - 1_000)).toBe(0);
    expect(tables.deleteExpired(T0 + EXPIRY_MS + 1_000)).toBe(4);
  });

  it("never lets an unacknowledged entry expire: a slow subscription's backlog outlives the TTL horizon four times over", async () => {
    const { ports, ledger, tables, live } = world();
    const topic = TopicName.parse('persistent://tenant/ns/slow');
    const fast = await sharedEarliestConsumer(ports, admin, topic);
    await createSubscription(ports, admin, topic, {
      name: 'slow',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    const payloads = Array.from({ length: 10 }, (_, i) => `m-${i}`);
    for (const payload of payloads) await publishPayloads(ports, admin, topic, [payload]);
    await consumeAll(ports, admin, fast);

    // 56 days of maintenance every 6 hours, DynamoDB's TTL deleting whatever expired each time.
    const totals = await live(4 * EXPIRY_MS, 6 * 60 * 60_000);

    expect(totals).toMatchObject({ expired: 0, ttlDeleted: 0 });
    // A walk is due 3.5 days before the earliest expiry and renews to 14 days out: each batch is
    // renewed every 10.5 days, at days 10.5, 21, 31.5, 42 and 52.5.
    expect(totals.renewed).toBe(10 * 5);
    expect(tables.entries.size).toBe(10);
    const position = [...tables.entries.values()][0]?.position as Position;
    expect(ledger.expiryOf(position)).toBeGreaterThan(T0 + 4 * EXPIRY_MS);
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'slow',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    expect(await receiveAll(ports, consumerId)).toEqual(payloads);
  });

  it('a retention policy that keeps everything keeps acknowledged entries past the horizon too', async () => {
    const { ports, tables, live } = world();
    const topic = TopicName.parse('persistent://tenant/ns/kept');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await setRetention(ports, admin, { topic }, { retentionTimeInMinutes: -1, retentionSizeInMB: -1 });
    await publishPayloads(ports, admin, topic, ['a', 'b']);
    await consumeAll(ports, admin, consumerId);

    const totals = await live(3 * EXPIRY_MS, DAY_MS);

    expect(totals).toMatchObject({ expired: 0, ttlDeleted: 0 });
    expect(tables.entries.size).toBe(2);
    const first = [...tables.entries.values()][0]?.position as Position;
    expect((await getMessageById(ports, admin, topic, first)).payload).toBe('a');
  });

  it('without renewal the same backlog would be gone after the horizon (the test can fail)', async () => {
    const { clock, ports, tables } = world();
    const topic = TopicName.parse('persistent://tenant/ns/unrenewed');
    await sharedEarliestConsumer(ports, admin, topic);
    await publishPayloads(ports, admin, topic, ['a', 'b']);
    clock.advance(EXPIRY_MS + 1_000);
    expect(tables.deleteExpired(clock.nowMs())).toBe(2);
  });
});

describe('InMemoryLedger expiry renewal (the semantics DynamoDbLedger has)', () => {
  async function ledgerWith(count: number) {
    const clock = new ManualClock(T0);
    const ledger = new InMemoryLedger(1000, undefined, undefined, {
      clock,
      expireEntries: true,
      entryExpiryMs: EXPIRY_MS,
    });
    const partition = TopicName.parse('persistent://tenant/ns/walk');
    const { ledgers } = await ledger.initialize(partition);
    for (let i = 0; i < count; i++)
      await ledger.append(partition, [{ payload: `p${i}`, properties: {} }], T0);
    return { clock, ledger, partition, ledgerId: ledgers[0]?.ledgerId as bigint };
  }

  it('walks nothing while the backlog is young, and is then not due until a quarter before the earliest expiry', async () => {
    const { ledger, partition } = await ledgerWith(3);

    const first = await ledger.renewExpiry(partition, { nowMs: T0 + DAY_MS, maxBatches: 100 });

    expect(first).toMatchObject({ renewed: 0, walked: 0 });
    // What lies beyond the walk expires from its publish on (less the slack): due 3.5 days before.
    expect(first?.dueAtMs).toBe(T0 - PUBLISH_ORDER_SLACK_MS + EXPIRY_MS - EXPIRY_MS / 4);
    expect(await ledger.renewExpiry(partition, { nowMs: T0 + 2 * DAY_MS, maxBatches: 100 })).toEqual({
      renewed: 0,
      walked: 0,
    });
  });

  it('renews a long backlog a few batches a walk, each walk going on where the last stopped', async () => {
    const { ledger, partition, ledgerId } = await ledgerWith(5);
    const now = T0 + 8 * DAY_MS;

    const walks = [];
    for (let i = 0; i < 3; i++)
      walks.push(await ledger.renewExpiry(partition, { nowMs: now, maxBatches: 2 }));

    expect(walks.map((walk) => [walk?.renewed, walk?.walked])).toEqual([
      [2, 2],
      [2, 2],
      [1, 1],
    ]);
    // The first two walks stopped short: due again at once; the last one a quarter before expiry.
    // (Batches published after the walk began expire from then on, less the slack.)
    expect(walks.map((walk) => walk?.dueAtMs)).toEqual([
      now,
      now,
      now - PUBLISH_ORDER_SLACK_MS + EXPIRY_MS - EXPIRY_MS / 4,
    ]);
    for (let entryId = 0n; entryId < 5n; entryId++) {
      expect(ledger.expiryOf(Position.of(ledgerId, entryId))).toBe(now + EXPIRY_MS);
    }
  });

  it('renews from the first kept position on: what retention let go is left to expire', async () => {
    const { ledger, partition, ledgerId } = await ledgerWith(4);
    await ledger.trim(partition, {
      consumedUpTo: Position.of(ledgerId, 1n),
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      nowMs: T0,
      maxBatches: 100,
    });

    const walk = await ledger.renewExpiry(partition, { nowMs: T0 + 8 * DAY_MS, maxBatches: 100 });

    expect(walk).toMatchObject({ renewed: 2, walked: 2 });
    expect(ledger.expiryOf(Position.of(ledgerId, 1n))).toBe(T0 + EXPIRY_MS);
    expect(ledger.expiryOf(Position.of(ledgerId, 2n))).toBe(T0 + 8 * DAY_MS + EXPIRY_MS);
  });

  it('reads skip what is before the first kept position, and anything past its expiry before the TTL deleted it', async () => {
    const { clock, ledger, partition, ledgerId } = await ledgerWith(3);
    const trimmed = await ledger.trim(partition, {
      consumedUpTo: Position.of(ledgerId, 0n),
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      nowMs: T0,
      maxBatches: 100,
    });
    expect(trimmed).toMatchObject({ entries: 1, bytes: 2, to: Position.of(ledgerId, 1n) });

    expect(await ledger.readEntry(Position.of(ledgerId, 0n))).toBeUndefined();
    expect((await ledger.readEntry(Position.of(ledgerId, 1n)))?.payload).toBe('p1');

    clock.set(T0 + EXPIRY_MS);
    expect(await ledger.readEntry(Position.of(ledgerId, 1n))).toBeUndefined();
    expect(await ledger.readEntries(ledgerId, 0n, 2n)).toEqual([]);
    expect(await ledger.firstWrittenAfter(ledgerId, -1n)).toBeUndefined();
  });
});
