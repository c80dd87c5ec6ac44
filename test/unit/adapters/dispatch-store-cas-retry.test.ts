import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type PartitionCursor,
} from '../../../shared/application/engine/engine-context.ts';
import { createSubscriptionCursor } from '../../../shared/application/engine/subscription-cursor.ts';
import type { DeliveryRun } from '../../../shared/domain/delivery-run.ts';
import { type DispatchHead, newDispatchHead } from '../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { DispatchStore } from '../../../shared/ports/dispatch-store.ts';
import { InMemoryDispatchStore } from '../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { ManualClock } from '../../support/manual-clock.ts';

/**
 * A compare-and-set whose first attempt applied and whose answer was lost (a timeout): the AWS SDK
 * sends the same request again, and DynamoDB refuses it for the version its own first attempt
 * wrote. The store must answer success then (the write is the caller's), and only then.
 */

const CURSOR = 'cursor';
const PAGE = { ledgerId: 1n, page: 0n };

function claimed(consumerId: string): DispatchHead {
  const run: DeliveryRun = {
    ledgerId: 1n,
    entryId: 0n,
    n: 3,
    deliveries: 1,
    state: { kind: 'held', consumerId, deliveredAtMs: 1_000 },
  };
  return { ...newDispatchHead(Position.ofStored(1n, -1n), Position.of(1n, 3n)), runs: [run] };
}

function runsFor(consumerId: string): { runs: DeliveryRun[] } {
  return {
    runs: [
      {
        ledgerId: 1n,
        entryId: 5n,
        n: 2,
        deliveries: 2,
        state: { kind: 'held', consumerId, deliveredAtMs: 2_000 },
      },
    ],
  };
}

async function storeWithHead(): Promise<InMemoryDispatchStore> {
  const store = new InMemoryDispatchStore();
  await store.createHead(CURSOR, newDispatchHead(Position.ofStored(1n, -1n), Position.of(1n, 0n)));
  return store;
}

describe('a compare-and-set retried after its applied first attempt timed out', () => {
  it('the head: the retry, refused for its own write, answers success', async () => {
    const store = await storeWithHead();
    const head = claimed('c1');
    expect(await store.casHead(CURSOR, 1, head)).toEqual({ ok: true });
    // The same request again (the SDK's retry): its condition fails against version 2.
    expect(await store.casHead(CURSOR, 1, head)).toEqual({ ok: true });
    expect((await store.readHead(CURSOR))?.version).toBe(2);
    expect(store.usage.failedConditionalWrites).toBe(1);
  });

  it('the head: still its write after an early-ack raise bumped the version', async () => {
    const store = await storeWithHead();
    const head = claimed('c1');
    await store.casHead(CURSOR, 1, head);
    await store.raiseAheadAck(CURSOR, Position.of(1n, 7n));
    expect(await store.casHead(CURSOR, 1, head)).toEqual({ ok: true });
  });

  it('the head: another request writing an equal head from the same version is refused (no ABA)', async () => {
    const store = await storeWithHead();
    await store.casHead(CURSOR, 1, claimed('c1'));
    const outcome = await store.casHead(CURSOR, 1, claimed('c1'));
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.current?.version).toBe(2);
  });

  it('the head: the retry after another write landed in between is a conflict', async () => {
    const store = await storeWithHead();
    const mine = claimed('c1');
    await store.casHead(CURSOR, 1, mine);
    await store.casHead(CURSOR, 2, claimed('c2'));
    expect((await store.casHead(CURSOR, 1, mine)).ok).toBe(false);
  });

  it('a page: the retry, refused for its own write, answers success', async () => {
    const store = await storeWithHead();
    const next = runsFor('c1');
    expect(await store.casPage(CURSOR, PAGE, 0, next)).toBe(true);
    await store.acknowledge(CURSOR, [Position.of(1n, 1n)]);
    expect(await store.casPage(CURSOR, PAGE, 0, next)).toBe(true);
    const [page] = await store.readPages(CURSOR, [PAGE]);
    expect(page?.version).toBe(1);
  });

  it('a page: another request with equal runs from the same version is refused (no ABA)', async () => {
    const store = await storeWithHead();
    await store.casPage(CURSOR, PAGE, 0, runsFor('c1'));
    expect(await store.casPage(CURSOR, PAGE, 0, runsFor('c1'))).toBe(false);
  });

  it('a page: the retry after the page was deleted and written again by another request is refused', async () => {
    const store = await storeWithHead();
    const mine = runsFor('c1');
    await store.casPage(CURSOR, PAGE, 0, mine);
    await store.deletePages(CURSOR, [PAGE]);
    await store.casPage(CURSOR, PAGE, 0, runsFor('c1'));
    expect(await store.casPage(CURSOR, PAGE, 0, mine)).toBe(false);
  });
});

/** The store as an SDK meets it when every compare-and-set times out once: applied, sent again, the second answer returned. */
function timingOut(store: InMemoryDispatchStore): DispatchStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'casHead' && property !== 'casPage') return value.bind(target);
      return async (...args: unknown[]) => {
        await value.apply(target, args);
        return value.apply(target, args);
      };
    },
  });
}

describe('the engine over compare-and-sets that time out once each', () => {
  it('an Exclusive consumer gets every entry its claims took, once', async () => {
    const partition = TopicName.parse('persistent://public/default/cas-retry');
    const clock = new ManualClock(1_000_000);
    const ledger = new InMemoryLedger(1_000);
    const ctx = {
      store: timingOut(new InMemoryDispatchStore()),
      ledger,
      clock,
      limits: DEFAULT_ENGINE_LIMITS,
    };
    const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Exclusive' };
    const consumer = { consumerId: 'a', ackTimeoutMs: () => 0, leaseMs: 60_000 };
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: 5 }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      clock.nowMs(),
    );
    await createSubscriptionCursor(ctx, cursor, 'Earliest');
    const received: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await dispatch(ctx, { cursor, consumer, max: 10 });
      if (result.kind === 'delivered') received.push(...result.deliveries.map((d) => d.position.toString()));
    }
    expect(received).toEqual(positions.map(String));
  });
});
