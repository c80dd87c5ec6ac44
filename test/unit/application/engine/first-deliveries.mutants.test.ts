import { describe, expect, it } from 'vitest';
import type {
  DispatchConsumer,
  KeySharedMember,
} from '../../../../shared/application/engine/engine-context.ts';
import {
  claimFirstDeliveries,
  planFirstDeliveries,
} from '../../../../shared/application/engine/first-deliveries.ts';
import { memberForKey } from '../../../../shared/application/engine/key-shared-routing.ts';
import { acknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import type { DeliveryRun } from '../../../../shared/domain/delivery-run.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import type { HeadRecord, PageState } from '../../../../shared/ports/dispatch-store.ts';
import type { StoredEntry } from '../../../../shared/ports/ledger.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';

// First deliveries from the read position: what one claim records and hands out (mutation
// testing, issue 21 criterion 5).

const NOW = 10_000;
const entry = (entryId: number, extra: Partial<StoredEntry> = {}): StoredEntry => ({
  position: Position.of(1, entryId),
  publishTimeMs: 0,
  payload: `m${entryId}`,
  properties: {},
  ...extra,
});
const entries = (count: number) => Array.from({ length: count }, (_, i) => entry(i));
const consumer = (consumerId = 'a', ackTimeoutMs = 0): DispatchConsumer => ({
  consumerId,
  ackTimeoutMs: () => ackTimeoutMs,
  leaseMs: 60_000,
});
const head = (markDelete = Position.beforeFirst(1n)) => newDispatchHead(markDelete, Position.of(1, 0));

function plan(
  input: Partial<Parameters<typeof planFirstDeliveries>[0]> & { readonly entries: readonly StoredEntry[] },
) {
  return planFirstDeliveries({
    head: head(),
    pages: new Map(),
    max: 100,
    consumer: consumer(),
    type: 'Shared' as SubscriptionType,
    nowMs: NOW,
    maxNewRuns: 12,
    ...input,
  });
}
/** Runs as `from+n deliveries state`, to compare at a glance. */
const shown = (runs: readonly DeliveryRun[]) =>
  runs.map((r) => {
    const s = r.state;
    const state =
      s.kind === 'held'
        ? `held ${s.consumerId}@${s.deliveredAtMs}${s.timeoutAtMs !== undefined ? `<${s.timeoutAtMs}` : ''}`
        : `released ${s.dueAtMs}`;
    return `${r.entryId}+${r.n} ${r.deliveries} ${state}`;
  });
const ids = (deliveries: readonly { position: Position }[]) =>
  deliveries.map((d) => Number(d.position.entryId));

describe('planFirstDeliveries', () => {
  it('hands out up to max in order, as one held run with count 0; the read position follows the last', () => {
    const planned = plan({ entries: entries(5), max: 3 });
    expect(shown(planned.runs)).toEqual([`0+3 1 held a@${NOW}`]);
    expect(ids(planned.deliveries)).toEqual([0, 1, 2]);
    expect(planned.deliveries.map((d) => d.redeliveryCount)).toEqual([0, 0, 0]);
    expect(planned.trackerEntries).toEqual([]);
    expect(planned.nextReadPosition?.toString()).toBe('1:3');
    expect(planned.full).toBe(false);
    expect(planned.routedAtMs).toBeUndefined();
  });

  it('nothing considered: no read position', () => {
    const planned = plan({ entries: [] });
    expect(planned.nextReadPosition).toBeUndefined();
    expect(planned.runs).toEqual([]);
  });

  it('with an ack timeout, the held run is due at it in the tracker', () => {
    const planned = plan({ entries: entries(2), consumer: consumer('a', 500) });
    expect(shown(planned.runs)).toEqual([`0+2 1 held a@${NOW}<${NOW + 500}`]);
    expect(planned.trackerEntries).toEqual([
      { dueAtMs: NOW + 500, position: Position.of(1, 0), deliveries: 1, n: 2 },
    ]);
  });

  it('skips what is acknowledged (mark-delete, or by id in its page), passing the read position over it', () => {
    const page: PageState = { ledgerId: 1n, page: 0n, acked: new Set([3]), runs: [], version: 1 };
    const planned = plan({
      head: head(Position.of(1, 1)),
      pages: new Map([['1#0', page]]),
      entries: entries(6),
    });
    expect(ids(planned.deliveries)).toEqual([2, 4, 5]);
    expect(shown(planned.runs)).toEqual([`2+1 1 held a@${NOW}`, `4+2 1 held a@${NOW}`]);
    expect(planned.nextReadPosition?.toString()).toBe('1:6');
    // Only acknowledged entries: nothing handed out, the read position passes them.
    const acked = plan({ head: head(Position.of(1, 5)), entries: entries(6) });
    expect(acked.deliveries).toEqual([]);
    expect(acked.nextReadPosition?.toString()).toBe('1:6');
  });

  it.each<[SubscriptionType, string[], number[]]>([
    [
      'Shared',
      [
        `0+1 1 held a@${NOW}`,
        `1+2 0 released ${NOW + 1}`,
        `3+1 0 released ${NOW + 2}`,
        `4+1 1 held a@${NOW}`,
      ],
      [0, 4],
    ],
    [
      'Key_Shared',
      [
        `0+1 1 held a@${NOW}`,
        `1+2 0 released ${NOW + 1}`,
        `3+1 0 released ${NOW + 2}`,
        `4+1 1 held a@${NOW}`,
      ],
      [0, 4],
    ],
    ['Exclusive', [`0+5 1 held a@${NOW}`], [0, 1, 2, 3, 4]],
    ['Failover', [`0+5 1 held a@${NOW}`], [0, 1, 2, 3, 4]],
  ])('%s: delayed entries wait for their deliverAt in the tracker (Exclusive and Failover ignore it)', (type, runs, handed) => {
    const planned = plan({
      type,
      entries: [
        entry(0, { deliverAtMs: NOW }),
        entry(1, { deliverAtMs: NOW + 1 }),
        entry(2, { deliverAtMs: NOW + 1 }),
        entry(3, { deliverAtMs: NOW + 2 }),
        entry(4),
      ],
    });
    expect(shown(planned.runs)).toEqual(runs);
    expect(ids(planned.deliveries)).toEqual(handed);
    if (type === 'Shared') {
      expect(planned.trackerEntries).toEqual([
        { dueAtMs: NOW + 1, position: Position.of(1, 1), deliveries: 0, n: 2 },
        { dueAtMs: NOW + 2, position: Position.of(1, 3), deliveries: 0, n: 1 },
      ]);
    }
  });

  it('adds at most maxNewRuns runs: it stops there and the read position with it', () => {
    const mixed = Array.from({ length: 10 }, (_, i) => entry(i, i % 2 ? { deliverAtMs: NOW + i } : {}));
    const planned = plan({ entries: mixed, maxNewRuns: 3 });
    expect(planned.runs).toHaveLength(3);
    expect(ids(planned.deliveries)).toEqual([0, 2]);
    expect(planned.nextReadPosition?.toString()).toBe('1:3');
  });

  it('Key_Shared: entries of another member’s key are released to the tracker at the routing time', () => {
    const members: KeySharedMember[] = [
      { consumerId: 'a', joinedAfter: Position.beforeFirst(1n) },
      { consumerId: 'b', joinedAfter: Position.beforeFirst(1n) },
    ];
    const keyOf = (consumerId: string) =>
      Array.from({ length: 100 }, (_, i) => `k${i}`).find(
        (key) => memberForKey(members, key)?.consumerId === consumerId,
      ) as string;
    const [mine, theirs] = [keyOf('a'), keyOf('b')];
    const keyed = [
      entry(0, { key: mine }),
      entry(1, { key: theirs }),
      entry(2, { key: theirs }),
      entry(3, { key: mine }),
    ];
    const planned = plan({ type: 'Key_Shared', members, entries: keyed });
    expect(ids(planned.deliveries)).toEqual([0, 3]);
    expect(shown(planned.runs)).toEqual([
      `0+1 1 held a@${NOW}`,
      `1+2 0 released ${NOW}`,
      `3+1 1 held a@${NOW}`,
    ]);
    expect(planned.routedAtMs).toBe(NOW);
    expect(planned.trackerEntries).toEqual([
      { dueAtMs: NOW, position: Position.of(1, 1), deliveries: 0, n: 2 },
    ]);
    // A routing time already ahead of this clock (another container's) is kept: routed entries stay in order.
    const ahead = plan({
      type: 'Key_Shared',
      members,
      entries: keyed,
      head: { ...head(), routedAtMs: NOW + 50 },
    });
    expect(ahead.routedAtMs).toBe(NOW + 50);
    // Without the member list, every entry is this consumer's.
    expect(ids(plan({ type: 'Key_Shared', entries: keyed }).deliveries)).toEqual([0, 1, 2, 3]);
    // Shared ignores keys.
    expect(ids(plan({ type: 'Shared', members, entries: keyed }).deliveries)).toEqual([0, 1, 2, 3]);
  });

  it('with a byte budget, stops before the first delivery it cannot carry; the read position stays there', () => {
    const budget = { bytes: 5, costOf: () => 2 };
    const planned = plan({ entries: entries(4), budget });
    expect(ids(planned.deliveries)).toEqual([0, 1]);
    expect(planned.nextReadPosition?.toString()).toBe('1:2');
    expect(planned.full).toBe(true);
    const none = plan({ entries: entries(2), budget: { bytes: 1, costOf: () => 2 } });
    expect(none.deliveries).toEqual([]);
    expect(none.nextReadPosition).toBeUndefined();
    expect(none.full).toBe(true);
  });
});

type World = ReturnType<typeof engineWorld>;
const headOf = async (w: World) => (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
const claim = async (w: World, extra: { max?: number; ownerChanges?: object; ackTimeoutMs?: number } = {}) =>
  claimFirstDeliveries(w.ctx, {
    cursor: w.cursor,
    consumer: w.consumer('a', { ackTimeoutMs: extra.ackTimeoutMs ?? 0 }),
    record: await headOf(w),
    max: extra.max ?? 10,
    ownerChanges: extra.ownerChanges ?? {},
  });
/** Writes `changes` into the cursor's head, as another writer would. */
async function writeHead(w: World, changes: object) {
  const record = await headOf(w);
  expect((await w.store.casHead(w.cursor.cursorId, record.version, { ...record.head, ...changes })).ok).toBe(
    true,
  );
}

describe('claimFirstDeliveries', () => {
  it('records what it hands out in the head: read position, held run, the delivered counter, the earliest due time', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(4);
    await w.subscribe();
    const later = w.clock.nowMs() + 60_000;
    await writeHead(w, { trackerDueAtMs: later });
    const claimed = await claim(w, { max: 3, ackTimeoutMs: 500 });
    const now = w.clock.nowMs();
    expect(claimed).toMatchObject({ kind: 'claimed', atEnd: false, full: false, timers: [now + 500] });
    if (claimed.kind !== 'claimed') return;
    expect(idsOf(claimed.deliveries)).toEqual(p.slice(0, 3).map(String));
    const { head } = await headOf(w);
    expect(head.readPosition.toString()).toBe(p[3]?.toString());
    expect(head.trackerDueAtMs).toBe(now + 500);
    expect(head.delivered).toMatchObject({ count: 3, bytes: 6 });
    expect(head.runs).toHaveLength(1);
    // An earlier due time stays.
    const v = engineWorld({ type: 'Shared' });
    await v.publish(1);
    await v.subscribe();
    await writeHead(v, { trackerDueAtMs: v.clock.nowMs() + 10 });
    await claim(v, { ackTimeoutMs: 500 });
    expect((await headOf(v)).head.trackerDueAtMs).toBe(v.clock.nowMs() + 10);
    // Nothing handed out: the counter is not written.
    const u = engineWorld({ type: 'Shared' });
    await u.publish(1, { deliverAtMs: u.clock.nowMs() + 1_000 });
    await u.subscribe();
    await claim(u);
    expect((await headOf(u)).head.delivered).toBeUndefined();
  });

  it('at the end of what is written: nothing, at end; an owner’s renewal is still written', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(1);
    await w.subscribe('Latest');
    const before = await headOf(w);
    expect(await claim(w)).toEqual({ kind: 'claimed', deliveries: [], timers: [], atEnd: true });
    expect((await headOf(w)).version).toBe(before.version);
    const owner = { consumerId: 'a', leaseUntilMs: w.clock.nowMs() + 60_000 };
    expect(await claim(w, { ownerChanges: { owner } })).toMatchObject({ kind: 'claimed', atEnd: true });
    expect((await headOf(w)).head.owner).toEqual(owner);
  });

  it('a renewal that loses its compare-and-set answers the current head', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store });
    await w.publish(1);
    await w.subscribe('Latest');
    store.lose.head = 1;
    const claimed = await claim(w, { ownerChanges: { owner: { consumerId: 'a', leaseUntilMs: 1 } } });
    expect(claimed).toEqual({ kind: 'conflict', current: await headOf(w) });
  });

  it('a claim that loses its compare-and-set writes nothing and names the entry it wanted', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store });
    const p = await w.publish(2);
    await w.subscribe();
    store.lose.head = 1;
    const claimed = await claim(w);
    expect(claimed).toEqual({ kind: 'conflict', current: await headOf(w), wanted: p[0] });
    expect((await headOf(w)).head.readPosition.toString()).toBe(p[0]?.toString());
  });

  it('while a reset clears its pages: nothing; once its resetter is overdue, the claim finishes the reset', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(3);
    await w.subscribe();
    const untilMs = w.clock.nowMs() + 1_000;
    await writeHead(w, { resetting: { end: p[2], untilMs } });
    expect(await claim(w)).toEqual({ kind: 'claimed', deliveries: [], timers: [], atEnd: false });
    w.clock.advance(1_000);
    const claimed = await claim(w);
    expect(claimed.kind).toBe('conflict');
    if (claimed.kind !== 'conflict') return;
    expect(claimed.current?.head.resetting).toBeUndefined();
    expect(claimed.current).toEqual(await headOf(w));
    expect(idsOf(await w.receive('a', 10))).toEqual(p.map(String));
  });

  it('at the subscription’s cap: folds what was acknowledged and goes on, or pauses', async () => {
    const w = engineWorld({ type: 'Shared', limits: { maxUnackedPerSubscription: 2 } });
    const p = await w.publish(4);
    await w.subscribe();
    expect(idsOf(await w.receive('a', 10))).toEqual(p.slice(0, 2).map(String));
    expect(await claim(w)).toEqual({ kind: 'claimed', deliveries: [], timers: [], atEnd: false });
    await acknowledge(w.ctx, w.cursor, [p[0] as Position], { byId: true });
    const claimed = await claim(w);
    expect(claimed.kind).toBe('conflict');
    expect((await headOf(w)).head.markDelete.toString()).toBe(p[0]?.toString());
    expect(idsOf(await w.receive('a', 10))).toEqual([p[2]?.toString()]);
  });

  it('Exclusive and Failover: the per-consumer cap bounds the window too; Shared only the subscription’s', async () => {
    for (const [type, handed] of [
      ['Exclusive', 2],
      ['Failover', 2],
      ['Shared', 3],
    ] as const) {
      const w = engineWorld({ type, limits: { maxUnackedPerSubscription: 3, maxUnackedPerConsumer: 2 } });
      await w.publish(5);
      await w.subscribe();
      const claimed = await claim(w);
      expect(claimed.kind === 'claimed' ? claimed.deliveries.length : -1).toBe(handed);
    }
    const w = engineWorld({
      type: 'Exclusive',
      limits: { maxUnackedPerSubscription: 2, maxUnackedPerConsumer: 3 },
    });
    await w.publish(5);
    await w.subscribe();
    const claimed = await claim(w);
    expect(claimed.kind === 'claimed' ? claimed.deliveries.length : -1).toBe(2);
  });

  it('a budget that cannot carry the first entry claims nothing, says full, and writes nothing', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    const before = await headOf(w);
    const claimed = await claimFirstDeliveries(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: before,
      max: 10,
      ownerChanges: {},
      budget: { bytes: 1, costOf: () => 2 },
    });
    expect(claimed).toEqual({ kind: 'claimed', deliveries: [], timers: [], atEnd: false, full: true });
    expect(await headOf(w)).toEqual(before);
  });

  it('an entry acknowledged by id before it was dispatched is passed over, also the one at the read position', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(3);
    await w.subscribe();
    await acknowledge(w.ctx, w.cursor, [p[0] as Position], { byId: true });
    expect(idsOf(await w.receive('a', 10))).toEqual(p.slice(1).map(String));
  });

  it('past the end of a ledger, goes by the recent state the context gives (a stale one waits)', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 2 });
    const p = await w.publish(2);
    await w.subscribe();
    const stale = await w.ledger.state(w.cursor.partition);
    const q = await w.publish(2); // the next ledger
    const ctx = { ...w.ctx, recentState: async () => stale };
    const receive = async () => {
      const answer = await claimFirstDeliveries(ctx, {
        cursor: w.cursor,
        consumer: w.consumer('a'),
        record: await headOf(w),
        max: 10,
        ownerChanges: {},
      });
      return answer.kind === 'claimed' ? idsOf(answer.deliveries) : [answer.kind];
    };
    expect(await receive()).toEqual(p.map(String));
    expect(await receive()).toEqual([]);
    const fresh = {
      ...ctx,
      recentState: (partition: typeof w.cursor.partition) => w.ledger.state(partition),
    };
    const answer = await claimFirstDeliveries(fresh, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: await headOf(w),
      max: 10,
      ownerChanges: {},
    });
    expect(answer.kind === 'claimed' ? idsOf(answer.deliveries) : []).toEqual(q.map(String));
  });

  it('starts after mark-delete when it is past the read position', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(5);
    await w.subscribe();
    await writeHead(w, { markDelete: p[2] });
    expect(idsOf(await w.receive('a', 10))).toEqual(p.slice(3).map(String));
  });

  it('a read position in a ledger no longer kept starts at the first ledger after it; none after: nothing', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(2);
    await w.subscribe(Position.of((p[0] as Position).ledgerId - 1n, 7));
    expect(idsOf(await w.receive('a', 10))).toEqual(p.map(String));
    const v = engineWorld({ type: 'Shared' });
    const q = await v.publish(2);
    await v.subscribe(Position.of((q[0] as Position).ledgerId + 5n, 0));
    expect(await claim(v)).toEqual({ kind: 'claimed', deliveries: [], timers: [], atEnd: true });
  });

  it('crosses rolled-over ledgers, also past an empty rest of one', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 3 });
    const p = await w.publish(7);
    await w.subscribe();
    expect(idsOf(await w.receive('a', 2))).toEqual(p.slice(0, 2).map(String));
    expect(idsOf(await w.receive('a', 10))).toEqual([p[2]?.toString()]);
    expect(idsOf(await w.receive('a', 10))).toEqual(p.slice(3, 6).map(String));
    expect(idsOf(await w.receive('a', 10))).toEqual([p[6]?.toString()]);
  });
});

describe('ids allocated and never written (a publisher that died)', () => {
  it('hold dispatch back until an entry written after them is abandonedIdMs old; then they are acknowledged', async () => {
    for (const max of [1, 10]) {
      const w = engineWorld({ type: 'Shared', limits: { abandonedIdMs: 5_000 } });
      const before = await w.publish(1);
      const holes = w.ledger.allocateUnwritten(w.cursor.partition, 2);
      await w.subscribe(before[0]);
      expect(await w.receive('a', max)).toEqual([]); // nothing written after them yet
      const after = await w.publish(1);
      w.clock.advance(4_999);
      expect(await w.receive('a', max)).toEqual([]); // its publisher may still be writing
      w.clock.advance(1);
      expect(idsOf(await w.receive('a', max))).toEqual(after.map(String));
      // The holes are acknowledged (by id, in their page): the read position passed them.
      const [page] = await w.store.readPages(w.cursor.cursorId, [
        { ledgerId: holes[0]?.ledgerId as bigint, page: 0n },
      ]);
      expect([...(page?.acked ?? [])].sort()).toEqual(holes.map((h) => Number(h.entryId)));
    }
  });

  it('at the end of a rolled-over ledger, judged by the first entry written in a later one', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 3, limits: { abandonedIdMs: 5_000 } });
    const before = await w.publish(2);
    w.ledger.allocateUnwritten(w.cursor.partition, 1); // the first ledger's last id
    await w.subscribe(before[1]);
    const after = await w.publish(2); // the next ledger
    expect((after[0] as Position).ledgerId).not.toBe((before[0] as Position).ledgerId);
    expect(await w.receive('a', 1)).toEqual([]);
    w.clock.advance(5_000);
    expect(idsOf(await w.receive('a', 10))).toEqual(after.map(String));
  });

  it('a written entry behind the hole within the read window tells it too', async () => {
    const w = engineWorld({ type: 'Shared', limits: { abandonedIdMs: 5_000 } });
    const p = await w.publish(1);
    const hole = w.ledger.allocateUnwritten(w.cursor.partition, 1);
    const q = await w.publish(2);
    await w.subscribe(p[0]);
    w.clock.advance(5_000);
    expect(idsOf(await w.receive('a', 10))).toEqual(q.map(String));
    expect(hole).toHaveLength(1);
  });
});
