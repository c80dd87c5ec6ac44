import { describe, expect, it } from 'vitest';
import { claimOwnership, dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import type { EngineContext, KeySharedMember } from '../../../../shared/application/engine/engine-context.ts';
import { negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { NotFoundError } from '../../../../shared/domain/errors.ts';
import { ConsumerFencedError } from '../../../../shared/domain/ownership.ts';
import type { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord } from '../../../../shared/ports/dispatch-store.ts';
import { type ConsumerOptions, engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

// Pulsar's dispatcher for one receive on one partition: the order of its steps, its attempts,
// and what its answer says (mutation testing, issue 21 criterion 5).

type World = ReturnType<typeof engineWorld>;
const headOf = async (w: World) => (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
/** Writes `changes` into the cursor's head, as another writer would. */
async function writeHead(w: World, changes: object) {
  const record = await headOf(w);
  expect((await w.store.casHead(w.cursor.cursorId, record.version, { ...record.head, ...changes })).ok).toBe(
    true,
  );
}
const call = (
  w: World,
  consumerId: string,
  max: number,
  extra: ConsumerOptions & { ctx?: EngineContext; members?: readonly KeySharedMember[] } = {},
) =>
  dispatch(extra.ctx ?? w.ctx, {
    cursor: w.cursor,
    consumer: w.consumer(consumerId, extra),
    max,
    ...(extra.members ? { members: extra.members } : {}),
  });
const delivered = async (result: ReturnType<typeof dispatch>) => {
  const answer = await result;
  return answer.kind === 'delivered' ? idsOf(answer.deliveries) : [answer.kind];
};

describe('dispatch', () => {
  it('hands out 1 to MAX_DISPATCH entries a call, whatever max asks', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(110);
    await w.subscribe();
    expect(await delivered(call(w, 'a', 0))).toEqual([p[0]?.toString()]);
    expect(await delivered(call(w, 'a', 2.9))).toEqual(p.slice(1, 3).map(String));
    expect((await delivered(call(w, 'a', 500))).length).toBe(100);
  });

  it('a cursor that does not exist is NotFound', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(1);
    await expect(call(w, 'a', 10)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('counts what a claim did not: redeliveries (and delayed entries) beside the head, once a call', async () => {
    const w = engineWorld({ type: 'Shared' });
    const p = await w.publish(3);
    await w.subscribe();
    await w.receive('a', 2);
    expect(await w.store.readCounters(w.cursor.cursorId)).toEqual({});
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: p[0] as Position }],
      delayMs: () => 0,
    });
    expect(await delivered(call(w, 'b', 10))).toEqual([p[0], p[2]].map(String));
    const counters = await w.store.readCounters(w.cursor.cursorId);
    expect(counters.out).toMatchObject({ count: 1, bytes: 2 });
    expect(counters.redelivered).toMatchObject({ count: 1, bytes: 2 });
    // A delayed entry handed out at its time: out, not redelivered.
    const v = engineWorld({ type: 'Shared' });
    const q = await v.publish(1, { deliverAtMs: v.clock.nowMs() + 10 });
    await v.subscribe();
    expect(await v.receive('a')).toEqual([]);
    v.clock.advance(10);
    expect(idsOf(await v.receive('a'))).toEqual(q.map(String));
    const only = await v.store.readCounters(v.cursor.cursorId);
    expect(only.out).toMatchObject({ count: 1, bytes: 2 });
    expect(only.redelivered).toBeUndefined();
  });

  it('tells the container what it handed to whom', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(3);
    await w.subscribe();
    const handed: [string, number][] = [];
    const ctx: EngineContext = {
      ...w.ctx,
      handedTo: (_cursor, consumerId, count) => handed.push([consumerId, count]),
    };
    await call(w, 'a', 2, { ctx });
    await call(w, 'b', 5, { ctx });
    expect(handed).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('caught up: at the end of what is written, nothing due, no replay; never with deliveries', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    expect(await call(w, 'a', 10, { ackTimeoutMs: 1_000 })).toMatchObject({
      caughtUp: false,
      contended: false,
      full: false,
    });
    // The ack timeouts are due later: nothing more for anyone now.
    expect(await call(w, 'a', 10)).toMatchObject({ deliveries: [], caughtUp: true });
    w.clock.advance(1_000);
    expect((await call(w, 'b', 1)).kind).toBe('delivered');
    // One ack timeout still due: not caught up, though nothing was left to claim.
    const answer = await call(w, 'b', 1);
    expect(answer).toMatchObject({ caughtUp: false });
    expect(answer.kind === 'delivered' ? answer.deliveries.length : 0).toBe(1);
    const emptyW = engineWorld({ type: 'Exclusive' });
    await emptyW.publish(1);
    await emptyW.subscribe('Latest');
    expect(await call(emptyW, 'a', 10)).toMatchObject({ deliveries: [], caughtUp: true });
  });

  it('Key_Shared: entries routed at a time ahead of this clock wait; the call says contended', async () => {
    const w = engineWorld({ type: 'Key_Shared' });
    await w.publish(2);
    await w.subscribe();
    await writeHead(w, { routedAtMs: w.clock.nowMs() + 1_000 });
    const members = [{ consumerId: 'a', joinedAfter: (await headOf(w)).head.markDelete }];
    expect(await call(w, 'a', 10, { members })).toMatchObject({
      deliveries: [],
      contended: true,
      caughtUp: false,
    });
    w.clock.advance(1_000);
    expect(await delivered(call(w, 'a', 10, { members }))).toHaveLength(2);
  });

  it('retries a lost claim after the pause the context gives, attempt by attempt', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store });
    const p = await w.publish(2);
    await w.subscribe();
    await claimOwnership(w.ctx, w.cursor, w.consumer('a'));
    const pauses: number[] = [];
    const ctx: EngineContext = { ...w.ctx, pauseAfterConflict: async (attempt) => void pauses.push(attempt) };
    store.lose.head = 2;
    expect(await delivered(call(w, 'a', 10, { ctx }))).toEqual(p.map(String));
    expect(pauses).toEqual([0, 1]);
  });

  it('gives up after casAttempts lost claims, with nothing', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store, limits: { casAttempts: 3 } });
    await w.publish(2);
    await w.subscribe();
    await claimOwnership(w.ctx, w.cursor, w.consumer('a'));
    store.lose.head = 100;
    expect(await call(w, 'a', 10)).toMatchObject({ deliveries: [], contended: false, caughtUp: false });
    expect(100 - store.lose.head).toBe(3);
  });

  it('with no attempts allowed, still makes one on a strongly read head', async () => {
    const w = engineWorld({ type: 'Shared', limits: { casAttempts: 0 } });
    const p = await w.publish(2);
    await w.subscribe();
    expect(await delivered(call(w, 'a', 10))).toEqual(p.map(String));
  });
});

describe('dispatch on an eventually consistent head', () => {
  /** A world whose eventually consistent head reads answer the oldest head still kept while `stale`. */
  function laggingWorld(type: 'Exclusive' | 'Failover') {
    const lag = { stale: false };
    const w = engineWorld({ type, store: new InMemoryDispatchStore(() => lag.stale) });
    return { w, lag };
  }

  /** Two more writes while a is the owner: the oldest head a lagging read answers names a. */
  async function aLagsBehind(w: World) {
    await writeHead(w, {});
    await writeHead(w, {});
  }

  it('Exclusive: an old head naming the consumer it replaced is read again before a refusal', async () => {
    const { w, lag } = laggingWorld('Exclusive');
    const p = await w.publish(2);
    await w.subscribe();
    await claimOwnership(w.ctx, w.cursor, w.consumer('a'));
    await aLagsBehind(w);
    // a went; b is the active consumer now (its subscribe wrote it).
    await writeHead(w, { owner: { consumerId: 'b', leaseUntilMs: w.clock.nowMs() + 60_000 } });
    lag.stale = true;
    expect(await delivered(call(w, 'b', 10))).toEqual(p.map(String));
    // On the current head the refusal stands.
    await expect(call(w, 'c', 10)).rejects.toBeInstanceOf(ConsumerFencedError);
  });

  it('Failover: standby only when the current head says so', async () => {
    const { w, lag } = laggingWorld('Failover');
    const p = await w.publish(2);
    await w.subscribe();
    await claimOwnership(w.ctx, w.cursor, w.consumer('a'));
    await aLagsBehind(w);
    await writeHead(w, { owner: { consumerId: 'b', leaseUntilMs: w.clock.nowMs() + 60_000 } });
    lag.stale = true;
    expect(await delivered(call(w, 'b', 10))).toEqual(p.map(String));
    expect(await call(w, 'a', 10)).toEqual({ kind: 'standby' });
  });
});

describe('claimOwnership', () => {
  it('takes over when nobody is active, renews its own lease, refuses or waits beside a live owner', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(1);
    await w.subscribe();
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('a', { leaseMs: 10_000 }))).toBe(true);
    expect((await headOf(w)).head.owner).toEqual({ consumerId: 'a', leaseUntilMs: w.clock.nowMs() + 10_000 });
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('b'))).toBe(false);
    // Renewed only once a good part of the lease has passed.
    const version = (await headOf(w)).version;
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('a', { leaseMs: 10_000 }))).toBe(true);
    expect((await headOf(w)).version).toBe(version);
    w.clock.advance(9_000);
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('a', { leaseMs: 10_000 }))).toBe(true);
    expect((await headOf(w)).head.owner).toEqual({ consumerId: 'a', leaseUntilMs: w.clock.nowMs() + 10_000 });
    w.clock.advance(10_000);
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('b'))).toBe(true);
    expect((await headOf(w)).head.owner?.consumerId).toBe('b');
  });

  it('gives up after casAttempts lost writes; a deleted subscription is NotFound', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store, limits: { casAttempts: 2 } });
    await w.publish(1);
    await w.subscribe();
    store.lose.head = 2;
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('a'))).toBe(false);
    expect(store.lose.head).toBe(0);
    expect(await claimOwnership(w.ctx, w.cursor, w.consumer('a'))).toBe(true);
    const gone = engineWorld({ type: 'Exclusive' });
    await expect(claimOwnership(gone.ctx, gone.cursor, gone.consumer('a'))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

/** A dispatch store that notes how each head read was made. */
class ReadNotingStore extends InMemoryDispatchStore {
  readonly headReads: string[] = [];

  override async readHead(cursorId: string, options: { readonly consistent?: boolean } = {}) {
    this.headReads.push(options.consistent === false ? 'eventual' : 'strong');
    return super.readHead(cursorId, options);
  }
}

describe('what a dispatch reads', () => {
  it('the head once, eventually consistent, when it hands something out; a strong read more when it finds nothing', async () => {
    const store = new ReadNotingStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(2);
    await w.subscribe();
    store.headReads.length = 0;
    expect(await delivered(call(w, 'a', 10))).toHaveLength(2);
    expect(store.headReads).toEqual(['eventual']);
    store.headReads.length = 0;
    expect(await delivered(call(w, 'a', 10))).toEqual([]);
    expect(store.headReads).toEqual(['eventual', 'strong']);
  });

  it('Exclusive: the owner’s lease renewal is written with its claim', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(2);
    await w.subscribe();
    await claimOwnership(w.ctx, w.cursor, w.consumer('a', { leaseMs: 10_000 }));
    w.clock.advance(9_000);
    const version = (await headOf(w)).version;
    expect(await delivered(call(w, 'a', 10, { leaseMs: 10_000 }))).toHaveLength(2);
    const after = await headOf(w);
    expect(after.version).toBe(version + 1);
    expect(after.head.owner).toEqual({ consumerId: 'a', leaseUntilMs: w.clock.nowMs() + 10_000 });
  });
});
