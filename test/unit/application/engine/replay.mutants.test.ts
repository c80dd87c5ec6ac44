import { describe, expect, it } from 'vitest';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { rewind } from '../../../../shared/application/engine/release.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld, idsOf } from '../../../support/engine-world.ts';

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
});
