import { describe, expect, it } from 'vitest';
import { heldAgainstCap } from '../../../../shared/application/engine/consumer-cap.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type DispatchConsumer,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { keySharedJoinMark } from '../../../../shared/application/engine/key-shared-routing.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import { markDeleteForward } from '../../../../shared/application/engine/reset-cursor.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import type { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/consumer-cap');
const ACK_TIMEOUT_MS = 20_000;

/** One consumer with a cap of 2 (Pulsar's maxUnackedMessagesPerConsumer) and an ack timeout. */
function world(type: SubscriptionType) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(250);
  /** The next eventually consistent head read answers the oldest head a lagging replica keeps. */
  let staleNext = false;
  const store = new InMemoryDispatchStore(() => {
    const stale = staleNext;
    staleNext = false;
    return stale;
  });
  const ctx: EngineContext = {
    store,
    ledger,
    clock,
    limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 2, maxUnackedPerSubscription: 8 },
  };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type };
  const consumer: DispatchConsumer = {
    consumerId: 'c0',
    ackTimeoutMs: () => ACK_TIMEOUT_MS,
    leaseMs: 60_000,
  };
  const publish = async (count: number) => {
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, key: 'k', properties: {} })),
      clock.nowMs(),
    );
    return positions;
  };
  let joinedAfter: Position | undefined;
  /** How many c0 was handed, or why none. */
  const receive = async (max: number) => {
    const result = await dispatch(ctx, {
      cursor,
      consumer,
      max,
      ...(type === 'Key_Shared'
        ? { members: [{ consumerId: 'c0', joinedAfter: joinedAfter as Position }] }
        : {}),
    });
    return result.kind === 'delivered' ? result.deliveries.length : result.kind;
  };
  const held = async () => heldAgainstCap(await pendingSummary(ctx, cursor)).get('c0') ?? 0;
  return {
    clock,
    ctx,
    cursor,
    publish,
    receive,
    held,
    joined: (mark: Position) => {
      joinedAfter = mark;
    },
    staleNextRead: () => {
      staleNext = true;
    },
  };
}

describe('per-consumer cap (I7)', () => {
  // Issue 25, the simulation's shrunk script (`npm run sim -- --runs 700 --seed 465351305`),
  // replayed call by call.
  it.each([
    'Shared',
    'Key_Shared',
  ] as const)('%s: a receive whose tracker pickup answered a newer head judges the cap again before its claim', async (type) => {
    const w = world(type);
    const published = await w.publish(30);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    w.joined(await keySharedJoinMark(w.ctx, w.cursor));
    // Round 1: c0 receives 1 (its ack timeout sets the head's tracker due time).
    expect(await w.receive(1)).toBe(1);
    // Round 2: skip_all acknowledges the 30 (and the held one) by mark-delete; 61 s pass.
    await markDeleteForward(w.ctx, w.cursor, published[29] as Position);
    w.clock.advance(61_000);
    // Round 3: 3 more published; c0 receives 2, reaching its cap, then is blocked.
    await w.publish(3);
    expect(await w.receive(2)).toBe(2);
    expect(await w.receive(1)).toBe('blocked');
    expect(await w.held()).toBe(2);
    // Round 4: c0 receives 1 on an eventually consistent head of round 1 (a lagging replica's):
    // its window of 1 entry leaves room for 1, and its tracker due time has passed. The pickup
    // finds nothing due; its write of the due time loses and answers the current head, on which
    // the claim would hand out a third entry had the room not been judged again.
    w.staleNextRead();
    expect(await w.receive(1)).toBe('blocked');
    expect(await w.held()).toBe(2);
  });
});
