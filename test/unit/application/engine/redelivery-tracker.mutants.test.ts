import { describe, expect, it } from 'vitest';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import {
  judgeTrackerEntry,
  pickUpDue,
  readEntriesAt,
  type TrackerSegment,
} from '../../../../shared/application/engine/redelivery-tracker.ts';
import type { DeliveryRun } from '../../../../shared/domain/delivery-run.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { DeadLetterRefusedError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord, PageState } from '../../../../shared/ports/dispatch-store.ts';
import {
  type ConsumerOptions,
  engineWorld,
  RacedStore,
  recordingDeadLetter,
} from '../../../support/engine-world.ts';

// Pulsar's redelivery tracker, durable: what a tracker entry stands for now, and the due
// redeliveries a pickup hands out (mutation testing, issue 21 criterion 5).

const run = (entryId: number, n: number, deliveries: number, state: DeliveryRun['state']): DeliveryRun => ({
  ledgerId: 1n,
  entryId: BigInt(entryId),
  n,
  deliveries,
  state,
});
const released = (dueAtMs: number): DeliveryRun['state'] => ({ kind: 'released', dueAtMs });
const held = (timeoutAtMs?: number): DeliveryRun['state'] => ({
  kind: 'held',
  consumerId: 'a',
  deliveredAtMs: 0,
  ...(timeoutAtMs !== undefined ? { timeoutAtMs } : {}),
});
/** Segments as `from+n verdict@run` (the run named by its first entry), to compare at a glance. */
const shown = (segments: readonly TrackerSegment[]) =>
  segments.map(
    (s) =>
      `${s.from}+${s.n} ${s.verdict}${s.located ? `@${s.located.run.entryId}/${s.located.home.kind}` : ''}`,
  );

describe('judgeTrackerEntry', () => {
  const head = {
    ...newDispatchHead(Position.beforeFirst(1n), Position.of(1, 10)),
    runs: [
      run(0, 2, 1, released(500)),
      run(2, 2, 1, held(900)),
      run(4, 1, 2, released(100)),
      run(5, 1, 1, held()),
      run(6, 1, 0, released(100)),
    ],
  };
  const entry = { dueAtMs: 500, position: Position.of(1, 0), deliveries: 1, n: 8 };

  it('splits the entry by run and says what each stretch is now', () => {
    expect(shown(judgeTrackerEntry(head, new Map(), entry, 1_000))).toEqual([
      '0+2 due@0/head', // released, due
      '2+2 due@2/head', // held past its ack timeout (another run: a stretch of its own)
      '4+1 stale@4/head', // handed out again since
      '5+1 pending@5/head', // held without an ack timeout
      '6+1 pending@6/head', // a run behind the entry's count: its write may be in flight
      '7+1 pending', // no run yet
    ]);
  });

  it('is due at the due time and ack timeout themselves, not a moment before', () => {
    expect(shown(judgeTrackerEntry(head, new Map(), { ...entry, n: 4 }, 900))).toEqual([
      '0+2 due@0/head',
      '2+2 due@2/head',
    ]);
    expect(shown(judgeTrackerEntry(head, new Map(), { ...entry, n: 4 }, 899))).toEqual([
      '0+2 due@0/head',
      '2+2 pending@2/head',
    ]);
    expect(shown(judgeTrackerEntry(head, new Map(), { ...entry, n: 2 }, 499))).toEqual(['0+2 stale@0/head']);
  });

  it('is stale where acknowledged (by mark-delete or in its page), and finds runs spilled to pages', () => {
    const page: PageState = {
      ledgerId: 1n,
      page: 0n,
      acked: new Set([1]),
      runs: [run(0, 3, 1, released(500))],
      version: 1,
    };
    const spilled = { ...newDispatchHead(Position.of(1, 0), Position.of(1, 10)), runs: [] };
    expect(shown(judgeTrackerEntry(spilled, new Map([['1#0', page]]), { ...entry, n: 3 }, 1_000))).toEqual([
      '0+2 stale',
      '2+1 due@0/page',
    ]);
  });
});

describe('readEntriesAt', () => {
  it('reads each ledger’s span of the positions, whatever their order', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 5 });
    const positions = await w.publish(9);
    const [l1, l2] = [positions[0]?.ledgerId, positions[5]?.ledgerId] as [bigint, bigint];
    const found = await readEntriesAt(w.ctx, [
      Position.of(l1, 3),
      Position.of(l2, 1),
      Position.of(l1, 1),
      Position.of(l1, 2),
      Position.of(l2, 3),
    ]);
    expect([...found.keys()].sort()).toEqual(
      [`${l1}:1`, `${l1}:2`, `${l1}:3`, `${l2}:1`, `${l2}:2`, `${l2}:3`].sort(),
    );
    expect(found.get(`${l2}:2`)?.payload).toBe('m7');
  });
});

type World = ReturnType<typeof engineWorld>;

/** `consumerId` negatively acknowledges `positions`, each due `delayMs` later. */
const nack = (w: World, consumerId: string, positions: readonly Position[], delayMs: number) =>
  negativeAcknowledge(w.ctx, {
    cursor: w.cursor,
    consumerId,
    items: positions.map((position) => ({ position })),
    delayMs: () => delayMs,
  });
const headOf = async (w: World) => (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
const pickUp = async (w: World, consumerId: string, max: number, extra: ConsumerOptions = {}) =>
  pickUpDue(w.ctx, {
    cursor: w.cursor,
    consumer: w.consumer(consumerId, extra),
    record: await headOf(w),
    max,
  });
const handed = (deliveries: readonly { position: Position; redeliveryCount: number }[]) =>
  deliveries.map((d) => `${d.position} #${d.redeliveryCount}`);
const heldBy = async (w: World) =>
  Object.fromEntries((await pendingSummary(w.ctx, w.cursor)).unackedByConsumer);

describe('pickUpDue', () => {
  it('hands out what is due in due-time order with its count, held with the ack timeout; the head’s due time moves to what is left', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(4);
    await w.subscribe();
    await w.receive('a', 4);
    await nack(w, 'a', [p[0] as Position], 3_000);
    await nack(w, 'a', [p[2] as Position], 1_000);
    await nack(w, 'a', [p[3] as Position], 60_000);
    w.clock.advance(3_000);
    const now = w.clock.nowMs();
    const picked = await pickUp(w, 'b', 10, { ackTimeoutMs: 500 });
    expect(handed(picked.deliveries)).toEqual([`${p[2]} #1`, `${p[0]} #1`]);
    expect(picked.timers).toEqual([now + 500, now + 500]);
    expect(picked).toMatchObject({ reread: false, full: false, deadLetterTimers: [] });
    expect(picked.mineLeft).toBeUndefined();
    expect(await heldBy(w)).toEqual({ a: 1, b: 2 });
    const stored = await headOf(w);
    expect(stored.head.trackerDueAtMs).toBe(now + 500);
    expect(picked.record).toEqual(stored);
    // Nothing is due now: a second pickup hands out nothing and writes nothing.
    const again = await pickUp(w, 'c', 10);
    expect(again.deliveries).toEqual([]);
    expect((await headOf(w)).version).toBe(stored.version);
    // At the ack timeout, b's two come back (count 2), p3 still waits for its backoff.
    w.clock.advance(500);
    const timedOut = await pickUp(w, 'c', 10);
    expect(handed(timedOut.deliveries)).toEqual([`${p[0]} #2`, `${p[2]} #2`]);
    expect((await headOf(w)).head.trackerDueAtMs).toBe(now - 3_000 + 60_000);
  });

  it('stops at the call’s max, in order, and leaves the rest due (the due time stays)', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    for (const position of p) await nack(w, 'a', [position], 1_000);
    w.clock.advance(1_000);
    const before = (await headOf(w)).head.trackerDueAtMs;
    const picked = await pickUp(w, 'b', 2);
    expect(handed(picked.deliveries)).toEqual([`${p[0]} #1`, `${p[1]} #1`]);
    expect(picked.mineLeft).toBeUndefined(); // Shared: no member's order to keep
    expect((await headOf(w)).head.trackerDueAtMs).toBe(before);
    expect(handed((await pickUp(w, 'c', 2)).deliveries)).toEqual([`${p[2]} #1`]);
    expect((await headOf(w)).head.trackerDueAtMs).toBeUndefined();
  });

  it('deletes an entry whose entries were acknowledged since, and clears the due time', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await nack(w, 'a', [p[0] as Position], 1_000);
    await acknowledge(w.ctx, w.cursor, [p[0] as Position], { byId: true });
    w.clock.advance(1_000);
    const picked = await pickUp(w, 'b', 10);
    expect(picked.deliveries).toEqual([]);
    expect(picked.reread).toBe(false);
    expect(await w.store.nextTrackerDue(w.cursor.cursorId, -1)).toBeUndefined();
    expect((await headOf(w)).head.trackerDueAtMs).toBeUndefined();
  });

  it('a due time whose write lost to another writer: the pickup answers the head that writer made', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store });
    const p = await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await nack(w, 'a', [p[0] as Position], 1_000);
    await acknowledge(w.ctx, w.cursor, [p[0] as Position], { byId: true });
    w.clock.advance(1_000);
    store.lose.head = 1;
    const picked = await pickUp(w, 'b', 10);
    expect(picked.deliveries).toEqual([]);
    expect(picked.reread).toBe(true);
    expect(picked.record).toEqual(await headOf(w));
  });

  it('an entry stale only on an older head is kept: a strong read finds the newer head, which the caller judges first', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await nack(w, 'a', [p[0] as Position], 1_000);
    w.clock.advance(1_000);
    const current = await headOf(w);
    // An eventually consistent head a version behind, on which p0 looked acknowledged.
    const older = {
      ...current,
      version: current.version - 1,
      head: { ...current.head, markDelete: p[0] as Position },
    };
    const picked = await pickUpDue(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('b'),
      record: older,
      max: 10,
    });
    expect(picked.deliveries).toEqual([]);
    expect(picked.reread).toBe(true);
    expect(picked.record).toEqual(current);
    expect(await w.store.nextTrackerDue(w.cursor.cursorId, -1)).toBe(current.head.trackerDueAtMs);
    expect(handed((await pickUp(w, 'b', 10)).deliveries)).toEqual([`${p[0]} #1`]);
  });

  it('a refused dead letter after a redelivery was taken returns that one, with a timer for the refused entry', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await nack(w, 'a', [p[1] as Position], 0);
    await w.receive('b', 1); // p1 again: delivered twice now
    await nack(w, 'a', [p[0] as Position], 0);
    await nack(w, 'b', [p[1] as Position], 0);
    const refusing = {
      maxRedeliverCount: 1,
      publish: async () => {
        throw new DeadLetterRefusedError('not allowed');
      },
    };
    const due = (await w.store.dueTracker(w.cursor.cursorId, w.clock.nowMs(), 10)).map((e) => e.dueAtMs);
    const picked = await pickUp(w, 'c', 10, { deadLetter: refusing });
    expect(handed(picked.deliveries)).toEqual([`${p[0]} #1`]);
    expect(picked.timers).toContain(due[1]);
    // Nothing taken before it: the refusal is the answer.
    await expect(pickUp(w, 'd', 10, { deadLetter: refusing })).rejects.toBeInstanceOf(DeadLetterRefusedError);
    expect(await heldBy(w)).toEqual({ c: 1 });
  });

  it('a redelivery after which the next would pass maxRedeliverCount sets a dead-letter timer at its ack timeout', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(1);
    await w.subscribe();
    await w.receive('a', 1);
    await nack(w, 'a', [p[0] as Position], 0);
    const { producer } = recordingDeadLetter(1);
    const now = w.clock.nowMs();
    const picked = await pickUp(w, 'b', 10, { ackTimeoutMs: 700, deadLetter: producer });
    expect(handed(picked.deliveries)).toEqual([`${p[0]} #1`]);
    expect(picked.deadLetterTimers).toEqual([{ dueAtMs: now + 700, position: p[0], deliveries: 2, n: 1 }]);
    // One below the limit: no timer.
    const v = engineWorld({ type: 'Shared' });
    const q = await v.publish(1);
    await v.subscribe();
    await v.receive('a', 1);
    await nack(v, 'a', [q[0] as Position], 0);
    const lenient = recordingDeadLetter(2).producer;
    expect((await pickUp(v, 'b', 10, { ackTimeoutMs: 700, deadLetter: lenient })).deadLetterTimers).toEqual(
      [],
    );
  });
});

describe('pickUpDue over pages', () => {
  it('an entry spanning two pages: what was acknowledged in the second page is not handed out again', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(105);
    await w.subscribe();
    await w.receive('x', 95);
    const run = (await w.receive('a', 10)).map((d) => d.position);
    expect(run.map(String)).toEqual(p.slice(95).map(String));
    await nack(w, 'a', run, 0);
    // Acknowledged once released (a late ack by id): the tracker entry still spans it.
    await acknowledge(w.ctx, w.cursor, [p[102] as Position], { byId: true });
    expect(await w.store.dueTracker(w.cursor.cursorId, w.clock.nowMs(), 10)).toMatchObject([{ n: 10 }]);
    // One stretch a pickup; the stretch after the acknowledged entry got an entry of its own.
    const picked = await pickUp(w, 'b', 20);
    expect(picked.deliveries.map((d) => d.position.toString())).toEqual(p.slice(95, 102).map(String));
    const rest = await pickUp(w, 'b', 20);
    expect(rest.deliveries.map((d) => d.position.toString())).toEqual(p.slice(103).map(String));
  });
});
