import { describe, expect, it } from 'vitest';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { rewind } from '../../../../shared/application/engine/release.ts';
import { replayStep } from '../../../../shared/application/engine/replay.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';

// An Exclusive/Failover rewind's replay (Pulsar's cursor rewind): from mark-delete, in log order,
// what is held or released and due comes back to the owner with its count; acknowledged entries
// and nack backoffs not over are left alone; first deliveries wait for the replay to end (I3)
// (mutation testing, issue 21 criterion 5).

const counts = (deliveries: readonly { redeliveryCount: number }[]) =>
  deliveries.map((d) => d.redeliveryCount);

describe('replay', () => {
  it('hands the owner again, in order and with their counts, what it held, skipping what was acknowledged', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(8);
    await w.subscribe();
    expect(await w.receive('a', 6)).toHaveLength(6);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 1), Position.of(1, 4)], { byId: false });
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const replayed = await w.receive('a', 10);
    expect(idsOf(replayed)).toEqual(['1:0', '1:2', '1:3', '1:5']);
    expect(counts(replayed)).toEqual([1, 1, 1, 1]);
    // The replay is over: first deliveries go on from the read position.
    const next = await w.receive('a', 10);
    expect(idsOf(next)).toEqual(['1:6', '1:7']);
    expect(counts(next)).toEqual([0, 0]);
  });

  it('hands out at most `max` a receive, and goes on from there', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect(idsOf(await w.receive('a', 2))).toEqual(['1:0', '1:1']);
    expect(idsOf(await w.receive('a', 2))).toEqual(['1:2', '1:3']);
    expect(idsOf(await w.receive('a', 2))).toEqual(['1:4']);
    expect(await w.receive('a', 2)).toEqual([]);
  });

  it('leaves a nacked entry to its backoff, and counts a second rewind', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(3);
    await w.subscribe();
    const held = await w.receive('a', 3);
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: held[1]!.position }],
      delayMs: () => 30_000,
    });
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect(idsOf(await w.receive('a', 10))).toEqual(['1:0', '1:2']);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const again = await w.receive('a', 10);
    expect(idsOf(again)).toEqual(['1:0', '1:2']);
    expect(counts(again)).toEqual([2, 2]);
    w.clock.advance(30_000);
    const due = await w.receive('a', 10);
    expect(idsOf(due)).toEqual(['1:1']);
    expect(counts(due)).toEqual([1]);
  });

  it('replays a released entry once it is due, within the replay', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(3);
    await w.subscribe();
    const held = await w.receive('a', 3);
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: held[0]!.position }],
      delayMs: () => 1_000,
    });
    w.clock.advance(1_000);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const replayed = await w.receive('a', 10);
    expect(idsOf(replayed)).toEqual(['1:0', '1:1', '1:2']);
    expect(counts(replayed)).toEqual([1, 1, 1]);
  });

  it('replays one page a step, across pages and rolled-over ledgers', async () => {
    const w = engineWorld({ type: 'Exclusive', ledgerSize: 150 });
    await w.publish(300);
    await w.subscribe();
    let taken = 0;
    while (taken < 300) taken += (await w.receive('a', 100)).length;
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const steps: string[][] = [];
    for (let i = 0; i < 6; i++) {
      const got = idsOf(await w.receive('a', 100));
      if (got.length === 0) break;
      steps.push([got[0] as string, got.at(-1) as string]);
    }
    expect(steps).toEqual([
      ['1:0', '1:99'],
      ['1:100', '1:149'],
      ['2:0', '2:99'],
      ['2:100', '2:149'],
    ]);
  });

  it('hands a new owner what the old one held, after a takeover', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(4);
    await w.subscribe();
    await w.receive('a', 2, { leaseMs: 1_000 });
    w.clock.advance(1_001);
    const taken = await w.receive('b', 10);
    expect(idsOf(taken)).toEqual(['1:0', '1:1']);
    expect(counts(taken)).toEqual([1, 1]);
    expect(idsOf(await w.receive('b', 10))).toEqual(['1:2', '1:3']);
  });

  it('gives the replayed entries the owner’s ack timeout: timers, and one tracker entry per stretch taken', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(4);
    await w.subscribe();
    await w.receive('a', 4);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 1)], { byId: false });
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const step = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a', { ackTimeoutMs: 5_000 }),
      record: (await w.store.readHead('c1')) as HeadRecord,
      max: 10,
    });
    expect(step.kind).toBe('replayed');
    expect(idsOf(step.deliveries)).toEqual(['1:0', '1:2', '1:3']);
    expect(step.timers).toEqual([1_005_000, 1_005_000]);
    const tracker = await w.store.dueTracker('c1', Number.MAX_SAFE_INTEGER, 10);
    expect(tracker.map((e) => [e.position.toString(), e.n, e.deliveries, e.dueAtMs])).toEqual([
      ['1:0', 1, 2, 1_005_000],
      ['1:2', 2, 2, 1_005_000],
    ]);
    const run = (await w.store.readHead('c1'))?.head.runs.find((r) => r.entryId === 2n);
    expect(run?.state).toEqual({
      kind: 'held',
      consumerId: 'a',
      deliveredAtMs: 1_000_000,
      timeoutAtMs: 1_005_000,
    });
    expect((await w.store.readHead('c1'))?.head.replayFrom).toBeUndefined();
  });

  it('without an ack timeout: no timer, no tracker entry, a run held with no timeout', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const step = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: (await w.store.readHead('c1')) as HeadRecord,
      max: 10,
    });
    expect(step).toMatchObject({ kind: 'replayed', timers: [] });
    expect(await w.store.dueTracker('c1', Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect((await w.store.readHead('c1'))?.head.runs.map((r) => r.state)).toEqual([
      { kind: 'held', consumerId: 'a', deliveredAtMs: 1_000_000 },
    ]);
  });

  it('replays runs that live in a page, writing that page before the head', async () => {
    const w = engineWorld({ type: 'Exclusive', limits: { maxHeadRuns: 1 } });
    await w.publish(4);
    await w.subscribe();
    for (let i = 0; i < 4; i++) await w.receive('a', 1);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 1)], { byId: false });
    const [page] = await w.store.readPages('c1', [{ ledgerId: 1n, page: 0n }]);
    expect(page?.runs.length).toBeGreaterThan(1);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const replayed = await w.receive('a', 10);
    expect(idsOf(replayed)).toEqual(['1:0', '1:2', '1:3']);
    expect(counts(replayed)).toEqual([1, 1, 1]);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect(counts(await w.receive('a', 10))).toEqual([2, 2, 2]);
  });

  it('answers a conflict, having handed out nothing, when the page or the head changed meanwhile', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store, limits: { maxHeadRuns: 1 } });
    await w.publish(3);
    await w.subscribe();
    for (let i = 0; i < 3; i++) await w.receive('a', 1);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const step = async () =>
      replayStep(w.ctx, {
        cursor: w.cursor,
        consumer: w.consumer('a'),
        record: (await w.store.readHead('c1')) as HeadRecord,
        max: 10,
      });
    const current = await w.store.readHead('c1');
    store.lose.page = 1;
    expect(await step()).toEqual({ kind: 'conflict', deliveries: [], timers: [], current });
    store.lose.head = 1;
    const lost = await step();
    expect([lost.kind, lost.deliveries, lost.timers]).toEqual(['conflict', [], []]);
    expect(lost.kind === 'conflict' && lost.current?.head.replayFrom?.toString()).toBe('1:0');
    const done = await step();
    expect(idsOf(done.deliveries)).toEqual(['1:0', '1:1', '1:2']);
  });

  it('stops at an entry the answer cannot carry; when it is the first, nothing is written', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const record = (await w.store.readHead('c1')) as HeadRecord;
    const tight = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record,
      max: 10,
      budget: { bytes: 5, costOf: () => 10 },
    });
    expect(tight).toEqual({ kind: 'replayed', deliveries: [], timers: [], full: true });
    expect((await w.store.readHead('c1'))?.version).toBe(record.version);
    const two = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record,
      max: 10,
      budget: { bytes: 25, costOf: () => 10 },
    });
    expect([idsOf(two.deliveries), two.kind === 'replayed' && two.full]).toEqual([['1:0', '1:1'], true]);
    expect((await w.store.readHead('c1'))?.head.replayFrom?.toString()).toBe('1:2');
  });

  it('takes one page a step, up to the read position and the ledger’s end, whatever the max', async () => {
    const w = engineWorld({ type: 'Exclusive', ledgerSize: 150 });
    await w.publish(280);
    await w.subscribe();
    let taken = 0;
    while (taken < 250) taken += (await w.receive('a', 100)).length;
    expect(String((await w.store.readHead('c1'))?.head.readPosition)).toBe('2:100');
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const record = await w.store.readHead('c1');
    const steps: string[] = [];
    for (const from of ['1:50', '1:100', '2:0', '2:50']) {
      const [ledger, entry] = from.split(':').map(Number) as [number, number];
      await w.store.casHead('c1', (await w.store.readHead('c1'))?.version as number, {
        ...record!.head,
        replayFrom: Position.of(ledger, entry),
      });
      const step = await replayStep(w.ctx, {
        cursor: w.cursor,
        consumer: w.consumer('a'),
        record: (await w.store.readHead('c1')) as HeadRecord,
        max: 1_000,
      });
      const ids = idsOf(step.deliveries);
      steps.push(`${ids[0]}..${ids.at(-1)}`);
    }
    expect(steps).toEqual(['1:50..1:99', '1:100..1:149', '2:0..2:99', '2:50..2:99']);
  });

  it('ends a replay that reached the end of a rolled-over ledger at the read position', async () => {
    const w = engineWorld({ type: 'Exclusive', ledgerSize: 100 });
    await w.publish(100);
    await w.subscribe();
    await w.receive('a', 100);
    await w.publish(1);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    const record = await w.store.readHead('c1');
    expect(String(record?.head.readPosition)).toBe('1:100');
    await w.store.casHead('c1', record?.version as number, {
      ...record!.head,
      replayFrom: Position.of(1, 100),
    });
    // Past the end of ledger 1: the replay is over, first deliveries go on from the read position.
    expect(idsOf(await w.receive('a', 10))).toEqual(['2:0']);
    expect((await w.store.readHead('c1'))?.head.replayFrom).toBeUndefined();
  });

  it('hands out an unacknowledged entry with no run as a first delivery again, in one run of the owner’s', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(4);
    await w.subscribe();
    const record = await w.store.readHead('c1');
    // No run names 1:0..1:2 (as after a reset's leftover was ignored): they count 0.
    await w.store.casHead('c1', record?.version as number, {
      ...record!.head,
      readPosition: Position.of(1, 3),
      replayFrom: Position.of(1, 0),
      owner: { consumerId: 'a', leaseUntilMs: 2_000_000 },
    });
    const step = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: (await w.store.readHead('c1')) as HeadRecord,
      max: 10,
    });
    expect(idsOf(step.deliveries)).toEqual(['1:0', '1:1', '1:2']);
    expect(counts(step.deliveries)).toEqual([0, 0, 0]);
    const runs = (await w.store.readHead('c1'))?.head.runs ?? [];
    expect(
      runs.map((r) => [r.entryId, r.n, r.deliveries, r.state.kind === 'held' && r.state.consumerId]),
    ).toEqual([[0n, 3, 1, 'a']]);
  });

  it('answers a conflict when its last head write, ending the replay, lost a race', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', ledgerSize: 100, store });
    await w.publish(100);
    await w.subscribe();
    await w.receive('a', 100);
    await w.publish(1);
    const record = await w.store.readHead('c1');
    await w.store.casHead('c1', record?.version as number, {
      ...record!.head,
      replayFrom: Position.of(1, 100),
    });
    const current = await w.store.readHead('c1');
    store.lose.head = 1;
    const step = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: current as HeadRecord,
      max: 10,
    });
    expect(step).toEqual({ kind: 'conflict', deliveries: [], timers: [], current });
    const done = await replayStep(w.ctx, {
      cursor: w.cursor,
      consumer: w.consumer('a'),
      record: current as HeadRecord,
      max: 10,
    });
    expect(done).toEqual({ kind: 'replayed', deliveries: [], timers: [] });
    expect((await w.store.readHead('c1'))?.head.replayFrom).toBeUndefined();
  });
});
