import { describe, expect, it } from 'vitest';
import {
  DEAD_LETTER_CLAIM_MS,
  DEAD_LETTER_HOLDER,
  deadLetterEntries,
} from '../../../../shared/application/engine/dead-letter-claim.ts';
import type { DeadLetterProducer } from '../../../../shared/application/engine/engine-context.ts';
import { locateRun, readPagesOf, runPagesOf } from '../../../../shared/application/engine/pending-state.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import { DeadLetterRefusedError } from '../../../../shared/domain/errors.ts';
import type { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, recordingDeadLetter } from '../../../support/engine-world.ts';

// Pulsar's dead-letter step, claimed first so one of the steps racing for an entry publishes it
// (issue 21 defect 1); mutation testing, issue 21 criterion 5.

/** `count` entries held by `a` (in the head, or spilled to a page with `spill`), and a step over `take` of them. */
async function heldBy(options: { count: number; take: number; spill?: boolean; ackTimeoutMs?: number }) {
  const w = engineWorld({ type: 'Shared', limits: options.spill ? { maxHeadRuns: 1 } : {} });
  await w.publish(options.count + 2);
  await w.subscribe();
  const held = await w.receive('a', options.count, { ackTimeoutMs: options.ackTimeoutMs ?? 10_000 });
  // Spilling needs more runs than the head keeps: another consumer's.
  if (options.spill) await w.receive('b', 2);
  const record = (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
  const first = held[0]?.position as Position;
  const pages = await readPagesOf(w.store, w.cursor.cursorId, runPagesOf(first));
  const located = locateRun(record.head, pages, first);
  if (!located) throw new Error('no run');
  const entries = held.slice(0, options.take).map((d) => d.entry);
  const step = (deadLetter: DeadLetterProducer, at: HeadRecord = record) => ({
    cursor: w.cursor,
    record: at,
    located,
    entries,
    deadLetter,
  });
  return { w, held, record, located, step };
}

const holders = async (w: ReturnType<typeof engineWorld>) =>
  Object.fromEntries((await pendingSummary(w.ctx, w.cursor)).unackedByConsumer);

const trackerNow = async (w: ReturnType<typeof engineWorld>) =>
  (await w.store.dueTracker(w.cursor.cursorId, Number.MAX_SAFE_INTEGER, 100)).map((e) => ({
    dueAtMs: e.dueAtMs,
    position: e.position.toString(),
    n: e.n,
  }));

describe('deadLetterEntries', () => {
  it('publishes the entries with their run’s count, acknowledges them, and answers the head it wrote', async () => {
    const { w, step, record, located } = await heldBy({ count: 3, take: 2 });
    const dlq = recordingDeadLetter(0);
    const trackerBefore = await trackerNow(w);
    const outcome = await deadLetterEntries(w.ctx, step(dlq.producer));
    expect(outcome.kind).toBe('published');
    expect(
      dlq.published.map((p) => [p.entries.map((e) => e.position.toString()), p.redeliveryCount]),
    ).toEqual([[['1:0', '1:1'], located.run.deliveries]]);
    expect(await holders(w)).toEqual({ a: 1 });
    const current = await w.store.readHead(w.cursor.cursorId);
    if (outcome.kind !== 'published') throw new Error(outcome.kind);
    expect(outcome.record?.version).toBe(record.version + 1);
    expect(outcome.record?.head).toEqual(current?.head);
    // The claim's timer is gone once published; the ack-timeout entries of the delivery stay.
    expect(await trackerNow(w)).toEqual(trackerBefore);
  });

  it('claims before it publishes: the entries are held by the dead-letter step until its claim ends', async () => {
    // No ack timeout: the head's due time is the claim's.
    const { w, step } = await heldBy({ count: 3, take: 2, ackTimeoutMs: 0 });
    const seen: Record<string, number>[] = [];
    const producer: DeadLetterProducer = {
      maxRedeliverCount: 0,
      publish: async () => {
        seen.push(await holders(w));
        const tracker = await trackerNow(w);
        expect(tracker.filter((e) => e.dueAtMs === w.clock.nowMs() + DEAD_LETTER_CLAIM_MS)).toEqual([
          { dueAtMs: w.clock.nowMs() + DEAD_LETTER_CLAIM_MS, position: '1:0', n: 2 },
        ]);
        const head = await w.store.readHead(w.cursor.cursorId);
        expect(head?.head.trackerDueAtMs).toBe(w.clock.nowMs() + DEAD_LETTER_CLAIM_MS);
      },
    };
    const outcome = await deadLetterEntries(w.ctx, step(producer));
    expect(seen).toEqual([{ [DEAD_LETTER_HOLDER]: 2, a: 1 }]);
    // The head it answers is the one it wrote (a run in the head: no read needed).
    expect(outcome.kind === 'published' && outcome.record?.head).toEqual(
      (await w.store.readHead(w.cursor.cursorId))?.head,
    );
  });

  it('loses to a change of the run since it was read: publishes nothing', async () => {
    const { w, step, record } = await heldBy({ count: 2, take: 2 });
    const dlq = recordingDeadLetter(0);
    // Another step wins the claim first.
    expect((await deadLetterEntries(w.ctx, step(recordingDeadLetter(0).producer))).kind).toBe('published');
    expect(await deadLetterEntries(w.ctx, step(dlq.producer, record))).toEqual({ kind: 'lost' });
    expect(dlq.published).toEqual([]);
  });

  it('claims a run spilled to its page, and lowers the head’s due time for the claim’s timer', async () => {
    // No ack timeout: the head has no due time before the claim's timer.
    const { w, step, located } = await heldBy({ count: 2, take: 2, spill: true, ackTimeoutMs: 0 });
    expect(located.home.kind).toBe('page');
    const dlq = recordingDeadLetter(0);
    const outcome = await deadLetterEntries(w.ctx, step(dlq.producer));
    expect(outcome).toEqual({ kind: 'published' });
    expect(dlq.published).toHaveLength(1);
    const left = await holders(w);
    expect([left.a, left[DEAD_LETTER_HOLDER]]).toEqual([undefined, undefined]);
    expect((await w.store.readHead(w.cursor.cursorId))?.head.trackerDueAtMs).toBe(
      w.clock.nowMs() + DEAD_LETTER_CLAIM_MS,
    );
  });

  it('answers the head handed in for a page’s run when the head’s due time needs no lowering', async () => {
    const { w, located } = await heldBy({ count: 2, take: 2, spill: true });
    // Lower the head's due time below the claim's end first.
    const record = (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
    await w.store.casHead(w.cursor.cursorId, record.version, {
      ...record.head,
      trackerDueAtMs: w.clock.nowMs(),
    });
    const lowered = (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
    const outcome = await deadLetterEntries(w.ctx, {
      cursor: w.cursor,
      record: lowered,
      located,
      entries: [],
      deadLetter: recordingDeadLetter(0).producer,
    });
    expect(outcome).toEqual({ kind: 'published', record: lowered });
  });

  it('gives a refused dead letter’s entries back as they were, and rethrows the refusal', async () => {
    const { w, step, held } = await heldBy({ count: 3, take: 2 });
    const before = await w.store.readHead(w.cursor.cursorId);
    const trackerBefore = await trackerNow(w);
    const refusing: DeadLetterProducer = {
      maxRedeliverCount: 0,
      publish: async () => {
        throw new DeadLetterRefusedError('not allowed');
      },
    };
    await expect(deadLetterEntries(w.ctx, step(refusing))).rejects.toThrow(DeadLetterRefusedError);
    expect(await holders(w)).toEqual({ a: 3 });
    // Each entry's run has its count and state again (the claim's pieces are not merged back).
    const after = (await w.store.readHead(w.cursor.cursorId)) as HeadRecord;
    for (const { position } of held) {
      const was = locateRun(before?.head as HeadRecord['head'], new Map(), position)?.run;
      const now = locateRun(after.head, new Map(), position)?.run;
      expect([now?.deliveries, now?.state]).toEqual([was?.deliveries, was?.state]);
    }
    expect(await trackerNow(w)).toEqual(trackerBefore);
  });

  it('keeps the claim when publishing fails otherwise: it lapses and the entries are due again later', async () => {
    const { w, step } = await heldBy({ count: 2, take: 2 });
    const failing: DeadLetterProducer = {
      maxRedeliverCount: 0,
      publish: async () => {
        throw new Error('network');
      },
    };
    await expect(deadLetterEntries(w.ctx, step(failing))).rejects.toThrow('network');
    expect(await holders(w)).toEqual({ [DEAD_LETTER_HOLDER]: 2 });
  });

  it('gives nothing back that another consumer took once the claim lapsed, nor to a deleted cursor', async () => {
    const { w, step } = await heldBy({ count: 2, take: 2 });
    const got: number[] = [];
    const takenMeanwhile: DeadLetterProducer = {
      maxRedeliverCount: 0,
      publish: async () => {
        w.clock.advance(DEAD_LETTER_CLAIM_MS);
        got.push((await w.receive('b', 10)).length);
        throw new DeadLetterRefusedError('not allowed');
      },
    };
    await expect(deadLetterEntries(w.ctx, step(takenMeanwhile))).rejects.toThrow(DeadLetterRefusedError);
    // b took the two claimed entries (their claim had lapsed) and the two never handed out.
    expect(got).toEqual([4]);
    expect(await holders(w)).toEqual({ b: 4 });

    const other = await heldBy({ count: 2, take: 2 });
    const deleting: DeadLetterProducer = {
      maxRedeliverCount: 0,
      publish: async () => {
        await other.w.store.deleteCursor(other.w.cursor.cursorId);
        throw new DeadLetterRefusedError('not allowed');
      },
    };
    await expect(deadLetterEntries(other.w.ctx, other.step(deleting))).rejects.toThrow(
      DeadLetterRefusedError,
    );
  });

  it('holds entries as no consumer could be named (consumer ids are never ~-prefixed)', () => {
    expect(DEAD_LETTER_HOLDER).toMatch(/^~./);
  });
});
