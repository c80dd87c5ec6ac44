import { describe, expect, it } from 'vitest';
import { queueOf } from '../../../shared/application/delivery.ts';
import {
  ABANDONED_AFTER_MS,
  type MaintenanceFailure,
  type MaintenanceOptions,
  maintainSubscriptions,
} from '../../../shared/application/maintain-subscriptions.ts';
import { Cursor } from '../../../shared/domain/cursor.ts';
import { Position } from '../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { NewEntry } from '../../../shared/ports/ledger.ts';
import type { SubscriptionRecord } from '../../../shared/ports/topic-catalog.ts';
import { InMemoryCursorStore } from '../../support/in-memory-cursor-store.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryTopicCatalog } from '../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const START_MS = 1_700_000_000_000;
const HOUR_MS = 3_600_000;

/** The cursor store, with a hook run at the start of markDelete (a write landing meanwhile). */
class HookedCursorStore extends InMemoryCursorStore {
  beforeMarkDelete?: (cursorId: string, position: Position) => Promise<void>;
  readonly loaded: string[] = [];
  readonly markDeletes: { cursorId: string; position: string }[] = [];
  onLoad?: () => void;

  override async load(cursorId: string) {
    this.loaded.push(cursorId);
    this.onLoad?.();
    return super.load(cursorId);
  }

  override async markDelete(cursorId: string, position: Position): Promise<void> {
    this.markDeletes.push({ cursorId, position: position.toString() });
    await this.beforeMarkDelete?.(cursorId, position);
    return super.markDelete(cursorId, position);
  }
}

/** One deployment in memory: ledgers of `maxEntriesPerLedger` entries, time at START_MS. */
function deployment(maxEntriesPerLedger = 3) {
  const clock = new ManualClock(START_MS);
  const catalog = new InMemoryTopicCatalog();
  const ledger = new InMemoryLedger(maxEntriesPerLedger);
  const cursors = new HookedCursorStore();
  const deliveryQueue = new InMemoryDeliveryQueue();
  const { ports } = inMemoryPorts({ catalog, ledger, cursors, deliveryQueue, clock });

  const failures: MaintenanceFailure[] = [];
  const run = (options: Partial<MaintenanceOptions> = {}) =>
    maintainSubscriptions(ports, {
      deadlineMs: clock.nowMs() + 60_000,
      onFailure: (failure) => failures.push(failure),
      ...options,
    });

  async function topic(name: string, partitions = 0): Promise<TopicName[]> {
    const base = TopicName.parse(`persistent://public/default/${name}`);
    await catalog.createTopic({ topic: base, partitions, createdAtMs: clock.nowMs() });
    const all =
      partitions === 0 ? [base] : Array.from({ length: partitions }, (_, index) => base.partition(index));
    for (const partition of all) await ledger.initialize(partition);
    return all;
  }

  async function publish(partition: TopicName, count: number, entry: Partial<NewEntry> = {}) {
    const entries = Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {}, ...entry }));
    return (await ledger.append(partition, entries, clock.nowMs())).positions;
  }

  /** A subscription at Earliest, with its queue, as subscribe creates it. */
  async function subscribe(
    partition: TopicName,
    name: string,
    type: SubscriptionType = 'Shared',
  ): Promise<SubscriptionRecord> {
    const record: SubscriptionRecord = {
      name,
      type,
      cursorId: `${partition.localName}|${name}`,
      createdAtMs: clock.nowMs(),
    };
    await catalog.createSubscription(partition, record);
    const state = await ledger.state(partition);
    await cursors.create(record.cursorId, Cursor.atEarliest(state!.ledgers).markDeletePosition);
    await deliveryQueue.create(queueOf(record));
    return record;
  }

  /** What the store holds: mark-delete and the acks after it. */
  async function stored(subscription: SubscriptionRecord) {
    const cursor = await cursors.load(subscription.cursorId);
    return {
      markDelete: cursor?.markDeletePosition.toString(),
      acknowledged: cursor?.acknowledged
        .filter((p) => p.compareTo(cursor.markDeletePosition) > 0)
        .map((p) => p.toString()),
    };
  }

  return {
    ports,
    clock,
    catalog,
    ledger,
    cursors,
    deliveryQueue,
    failures,
    run,
    topic,
    publish,
    subscribe,
    stored,
  };
}

const at = (text: string) => Position.parse(text);

describe('maintainSubscriptions: fold', () => {
  it('moves mark-delete to the end of the acked run right after it and stops at the first hole', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    const positions = await d.publish(orders!, 8); // 1:0 .. 1:7
    const billing = await d.subscribe(orders!, 'billing');
    // Acked: 1:0 1:1 1:2, hole at 1:3, then 1:4 1:6.
    await d.cursors.acknowledge(
      billing.cursorId,
      [0, 1, 2, 4, 6].map((i) => positions[i]!),
    );

    const summary = await d.run();

    expect(await d.stored(billing)).toEqual({ markDelete: '1:2', acknowledged: ['1:4', '1:6'] });
    expect(summary).toMatchObject({ subscriptions: 1, visited: 1, foldedCursors: 1, foldedEntries: 3 });
    expect(summary.resumeAfter).toBeUndefined();
    expect(d.failures).toEqual([]);
  });

  it('loses no acknowledgement: every position acked before the run is acknowledged after it', async () => {
    const d = deployment(4);
    const [orders] = await d.topic('orders');
    const positions = [...(await d.publish(orders!, 6)), ...(await d.publish(orders!, 7))];
    const billing = await d.subscribe(orders!, 'billing');
    const acked = positions.filter((_, i) => i !== 5 && i !== 9);
    await d.cursors.acknowledge(billing.cursorId, acked);

    await d.run();

    expect(await d.cursors.isAcknowledged(billing.cursorId, acked)).toEqual(acked.map(() => true));
    const notAcked = [positions[5]!, positions[9]!];
    expect(await d.cursors.isAcknowledged(billing.cursorId, notAcked)).toEqual([false, false]);
    expect((await d.stored(billing)).markDelete).toBe(positions[4]!.toString());
  });

  it("follows the partition's own ledgers: a run crosses into its next ledger, skipping ledgers of other partitions", async () => {
    const d = deployment(3);
    const [a, b] = await d.topic('orders', 2); // partition 0 gets ledger 1, partition 1 ledger 2
    await d.publish(a!, 3); // 1:0 1:1 1:2 (ledger 1 full)
    await d.publish(b!, 3); // 2:0 2:1 2:2
    await d.publish(a!, 2); // ledger 1 is full: partition 0 rolls over to ledger 3
    const state = await d.ledger.state(a!);
    expect(state?.ledgers.map((l) => l.ledgerId)).toEqual([1n, 3n]);
    const billing = await d.subscribe(a!, 'billing');
    await d.cursors.acknowledge(billing.cursorId, ['1:0', '1:1', '1:2', '3:0'].map(at));

    const summary = await d.run();

    // 1:2 is the last entry of ledger 1 and 3:0 the next entry of this partition (ledger 2 is partition 1's).
    expect(await d.stored(billing)).toEqual({ markDelete: '3:0', acknowledged: [] });
    expect(summary.foldedEntries).toBe(4);
  });

  it('stops at a hole on a ledger boundary: the last entry of a ledger unacked keeps the next ledger out', async () => {
    const d = deployment(3);
    const [a, b] = await d.topic('orders', 2);
    await d.publish(a!, 3);
    await d.publish(b!, 3);
    await d.publish(a!, 2);
    const billing = await d.subscribe(a!, 'billing');
    await d.cursors.acknowledge(billing.cursorId, ['1:0', '1:1', '3:0', '3:1'].map(at));

    await d.run();

    expect(await d.stored(billing)).toEqual({ markDelete: '1:1', acknowledged: ['3:0', '3:1'] });
  });

  it('changes nothing when nothing after mark-delete is acknowledged, and a second run finds nothing more', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 5);
    const idle = await d.subscribe(orders!, 'idle');
    const holed = await d.subscribe(orders!, 'holed');
    await d.cursors.acknowledge(holed.cursorId, [at('1:1'), at('1:2')]);
    const folded = await d.subscribe(orders!, 'folded');
    await d.cursors.acknowledge(folded.cursorId, [at('1:0'), at('1:1')]);

    const first = await d.run();
    const second = await d.run();

    expect(first).toMatchObject({ visited: 3, foldedCursors: 1, foldedEntries: 2 });
    expect(second).toMatchObject({ visited: 3, foldedCursors: 0, foldedEntries: 0 });
    expect(d.cursors.markDeletes).toEqual([{ cursorId: folded.cursorId, position: '1:1' }]);
    expect(await d.stored(idle)).toEqual({ markDelete: '1:-1', acknowledged: [] });
    expect(await d.stored(holed)).toEqual({ markDelete: '1:-1', acknowledged: ['1:1', '1:2'] });
  });

  it('keeps an acknowledgement that lands while the fold writes, after and before its new mark-delete', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 6);
    const billing = await d.subscribe(orders!, 'billing');
    await d.cursors.acknowledge(billing.cursorId, [at('1:0'), at('1:1')]);
    d.cursors.beforeMarkDelete = async (cursorId) => {
      d.cursors.beforeMarkDelete = undefined;
      // A consumer acks 1:4 (after the hole at 1:2) and, late, 1:0 again.
      await d.cursors.acknowledge(cursorId, [at('1:4'), at('1:0')]);
    };

    await d.run();

    expect(await d.stored(billing)).toEqual({ markDelete: '1:1', acknowledged: ['1:4'] });
  });

  it('never moves mark-delete back behind a cumulative ack that got further during the fold', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 6);
    const billing = await d.subscribe(orders!, 'billing', 'Exclusive');
    await d.cursors.acknowledge(billing.cursorId, [at('1:0'), at('1:1')]);
    d.cursors.beforeMarkDelete = async (cursorId) => {
      d.cursors.beforeMarkDelete = undefined;
      await d.cursors.markDelete(cursorId, at('1:4'));
    };

    await d.run();

    expect(await d.stored(billing)).toEqual({ markDelete: '1:4', acknowledged: [] });
  });
});

describe('maintainSubscriptions: ids allocated but never written', () => {
  /** 1:0-1:2 written and acknowledged, 1:3-1:4 allocated by a publisher that died, 1:5-1:7 written later. */
  async function abandoned() {
    const d = deployment(100);
    const [orders] = await d.topic('orders');
    const first = await d.publish(orders!, 3);
    const lost = d.ledger.allocateUnwritten(orders!, 2);
    const billing = await d.subscribe(orders!, 'billing');
    await d.cursors.acknowledge(billing.cursorId, first);
    d.clock.advance(1_000);
    const later = await d.publish(orders!, 3);
    return { d, billing, lost, later, publishedAtMs: d.clock.nowMs() };
  }

  it('acknowledges them once an entry allocated after them was published ABANDONED_AFTER_MS ago, then folds past them', async () => {
    const { d, billing, lost } = await abandoned();
    d.clock.advance(ABANDONED_AFTER_MS);

    await d.run();

    expect(lost.map(String)).toEqual(['1:3', '1:4']);
    expect(await d.stored(billing)).toEqual({ markDelete: '1:4', acknowledged: [] });
    expect(d.failures).toEqual([]);
  });

  it('acknowledges a run longer than a publish (1,500 ids), and one ending its ledger (the proof is in the next)', async () => {
    const d = deployment(2_000);
    const [orders] = await d.topic('orders');
    const billing = await d.subscribe(orders!, 'billing');
    const lost = d.ledger.allocateUnwritten(orders!, 2_000); // all of ledger 1
    const later = await d.publish(orders!, 2); // ledger 2
    d.clock.advance(ABANDONED_AFTER_MS);

    await d.run();
    await d.run();

    expect(lost[lost.length - 1]!.ledgerId).not.toBe(later[0]!.ledgerId);
    expect(await d.stored(billing)).toEqual({
      markDelete: lost[lost.length - 1]!.toString(),
      acknowledged: [],
    });
    expect(await d.cursors.isAcknowledged(billing.cursorId, later)).toEqual([false, false]);
  });

  it('leaves them while their publisher may still be writing', async () => {
    const { d, billing, lost, publishedAtMs } = await abandoned();
    d.clock.set(publishedAtMs + ABANDONED_AFTER_MS - 1);

    await d.run();

    expect(await d.stored(billing)).toEqual({ markDelete: '1:2', acknowledged: [] });
    expect(await d.cursors.isAcknowledged(billing.cursorId, lost)).toEqual([false, false]);
  });

  it('leaves them when nothing was written after them (nothing tells how old they are)', async () => {
    const d = deployment(100);
    const [orders] = await d.topic('orders');
    const billing = await d.subscribe(orders!, 'billing');
    const lost = d.ledger.allocateUnwritten(orders!, 2);
    d.clock.advance(10 * ABANDONED_AFTER_MS);

    await d.run();

    expect(await d.cursors.isAcknowledged(billing.cursorId, lost)).toEqual([false, false]);
  });

  it('never acknowledges a written entry, nor ids after the first written one', async () => {
    const { d, billing, later } = await abandoned();
    const orders = TopicName.parse('persistent://public/default/orders');
    const afterLater = d.ledger.allocateUnwritten(orders, 1);
    await d.publish(orders, 1);
    d.clock.advance(ABANDONED_AFTER_MS);

    await d.run();

    expect(await d.cursors.isAcknowledged(billing.cursorId, [...later, ...afterLater])).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('maintainSubscriptions: isolation', () => {
  it('reports a subscription whose cursor cannot be read and maintains the others', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 3);
    const subscriptions = [await d.subscribe(orders!, 'a'), await d.subscribe(orders!, 'b')];
    for (const s of subscriptions) await d.cursors.acknowledge(s.cursorId, [at('1:0')]);
    const boom = new Error('throttled');
    d.cursors.failNext('load', boom);

    const summary = await d.run();

    expect(summary).toMatchObject({ visited: 2, foldedCursors: 1, failures: 1 });
    expect(d.failures).toEqual([
      { step: 'fold', target: expect.stringMatching(/orders\|(a|b)$/), error: boom },
    ]);
  });

  it('reports a partition whose subscriptions cannot be listed and maintains the other partitions', async () => {
    const d = deployment(10);
    const partitions = await d.topic('orders', 2);
    for (const partition of partitions) {
      const [first] = await d.publish(partition, 2);
      const s = await d.subscribe(partition, 'billing');
      await d.cursors.acknowledge(s.cursorId, [first!]);
    }
    d.catalog.failNext('listSubscriptions', new Error('throttled'));

    const summary = await d.run();

    expect(summary).toMatchObject({ subscriptions: 1, visited: 1, foldedCursors: 1, failures: 1 });
    expect(d.failures[0]).toMatchObject({ step: 'listSubscriptions' });
  });

  it('skips a subscription deleted since the listing without calling it a failure', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    const gone = await d.subscribe(orders!, 'gone');
    await d.cursors.delete(gone.cursorId);

    const summary = await d.run();

    expect(summary).toMatchObject({ subscriptions: 1, visited: 1, foldedCursors: 0, failures: 0 });
  });
});

describe('maintainSubscriptions: time budget', () => {
  /** Twenty subscriptions; reading a cursor takes a second of the clock. */
  async function busyDeployment() {
    const d = deployment(100);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 2);
    for (let i = 0; i < 20; i++) {
      const s = await d.subscribe(orders!, `s${String(i).padStart(2, '0')}`);
      await d.cursors.acknowledge(s.cursorId, [at('1:0')]);
    }
    d.cursors.onLoad = () => d.clock.advance(1000);
    return d;
  }

  it('starts nothing after the deadline and carries on after the last subscription it reached', async () => {
    const d = await busyDeployment();

    const first = await d.run({ deadlineMs: d.clock.nowMs() + 500 });
    const reached = [...d.cursors.loaded];

    expect(first.visited).toBeGreaterThan(0);
    expect(first.visited).toBeLessThan(20);
    expect(first.foldedCursors).toBe(first.visited);
    expect(first.resumeAfter).toBe(
      JSON.stringify([
        'persistent://public/default/orders',
        `s${String(first.visited - 1).padStart(2, '0')}`,
      ]),
    );
    // The dead-letter queues were all inspected before the fold spent the budget.
    expect(first.deadLetterQueuesChecked).toBe(20);

    const runs = [first];
    while (d.cursors.loaded.length < 20 && runs.length < 40) {
      const resumeAfter = runs.at(-1)?.resumeAfter;
      expect(resumeAfter).toBeDefined();
      runs.push(await d.run({ deadlineMs: d.clock.nowMs() + 500, ...(resumeAfter ? { resumeAfter } : {}) }));
    }

    const cursorsInOrder = Array.from({ length: 20 }, (_, i) => `orders|s${String(i).padStart(2, '0')}`);
    expect(reached).toEqual(cursorsInOrder.slice(0, first.visited));
    expect(d.cursors.loaded).toEqual(cursorsInOrder);
    expect(runs.reduce((sum, run) => sum + run.foldedCursors, 0)).toBe(20);
  });

  it('starts at the given fraction of the subscriptions when there is no resume point', async () => {
    const d = await busyDeployment();

    await d.run({ deadlineMs: d.clock.nowMs() + 500, startAt: 0.5 });

    expect(d.cursors.loaded[0]).toBe('orders|s10');
  });

  it('wraps around from its start and reaches every subscription in one run when time allows', async () => {
    const d = await busyDeployment();

    const summary = await d.run({ deadlineMs: d.clock.nowMs() + 60_000, startAt: 0.75 });

    expect(summary).toMatchObject({ visited: 20, foldedCursors: 20 });
    expect(summary.resumeAfter).toBeUndefined();
    expect(d.cursors.loaded.slice(0, 2)).toEqual(['orders|s15', 'orders|s16']);
  });
});

describe('maintainSubscriptions: dead-letter queues', () => {
  it('adds up the tokens of every subscription dead-letter queue and names the non-empty ones, most first', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    const [payments] = await d.topic('payments');
    const a = await d.subscribe(orders!, 'a');
    await d.subscribe(orders!, 'b');
    const c = await d.subscribe(payments!, 'c', 'Failover');
    d.deliveryQueue.setDeadLetterCount(a.cursorId, 2);
    d.deliveryQueue.setDeadLetterCount(c.cursorId, 5);

    const summary = await d.run();

    expect(summary).toMatchObject({ subscriptions: 3, deadLetterQueuesChecked: 3, deadLetterMessages: 7 });
    expect(summary.deadLetterQueues).toEqual([
      {
        partition: 'persistent://public/default/payments',
        subscription: 'c',
        cursorId: c.cursorId,
        messages: 5,
      },
      {
        partition: 'persistent://public/default/orders',
        subscription: 'a',
        cursorId: a.cursorId,
        messages: 2,
      },
    ]);
  });

  it('reports a dead-letter queue it cannot read and counts the others', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    for (const name of ['a', 'b', 'c']) {
      const s = await d.subscribe(orders!, name);
      d.deliveryQueue.setDeadLetterCount(s.cursorId, 1);
    }
    d.deliveryQueue.failNext('deadLetterCount', new Error('throttled'));

    const summary = await d.run();

    expect(summary).toMatchObject({ deadLetterQueuesChecked: 2, deadLetterMessages: 2, failures: 1 });
    expect(d.failures[0]).toMatchObject({ step: 'deadLetters' });
  });
});

describe('maintainSubscriptions: backlog age', () => {
  it('is how long the oldest unacknowledged message has waited since it was published', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 2);
    d.clock.advance(HOUR_MS);
    await d.publish(orders!, 2);
    const billing = await d.subscribe(orders!, 'billing');
    await d.cursors.acknowledge(billing.cursorId, [at('1:0')]);
    const caughtUp = await d.subscribe(orders!, 'caught-up');
    await d.cursors.acknowledge(caughtUp.cursorId, ['1:0', '1:1', '1:2', '1:3'].map(at));
    d.clock.advance(HOUR_MS);

    const summary = await d.run();

    // billing's oldest unacked message is 1:1, published two hours ago.
    expect(summary.oldestBacklog).toEqual({
      partition: 'persistent://public/default/orders',
      subscription: 'billing',
      cursorId: billing.cursorId,
      ageMs: 2 * HOUR_MS,
    });
  });

  it('does not count a delayed message before it is due, and counts it from when it fell due', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 1, { deliverAtMs: START_MS + 48 * HOUR_MS });
    await d.publish(orders!, 1, { deliverAtMs: START_MS + HOUR_MS });
    d.clock.advance(30 * 60_000);
    await d.publish(orders!, 1);
    await d.subscribe(orders!, 'billing');

    d.clock.advance(30 * 60_000); // the second message falls due now; the third waited 30 minutes
    expect((await d.run()).oldestBacklog?.ageMs).toBe(30 * 60_000);
    d.clock.advance(2 * HOUR_MS);
    expect((await d.run()).oldestBacklog?.ageMs).toBe(2 * HOUR_MS + 30 * 60_000);
  });

  it('is absent when no subscription has a due message waiting', async () => {
    const d = deployment(10);
    const [orders] = await d.topic('orders');
    await d.publish(orders!, 1, { deliverAtMs: START_MS + HOUR_MS });
    await d.subscribe(orders!, 'billing');

    expect((await d.run()).oldestBacklog).toBeUndefined();
  });
});
