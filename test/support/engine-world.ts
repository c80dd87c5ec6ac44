import { dispatch } from '../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type DeadLetterProducer,
  type DispatchConsumer,
  type EngineContext,
  type EngineLimits,
  type KeySharedMember,
  type PartitionCursor,
} from '../../shared/application/engine/engine-context.ts';
import { createSubscriptionCursor } from '../../shared/application/engine/subscription-cursor.ts';
import type { Position } from '../../shared/domain/position.ts';
import type { SubscriptionType } from '../../shared/domain/subscription-type.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import type { StoredEntry } from '../../shared/ports/ledger.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryLedger } from './in-memory-ledger.ts';
import { ManualClock } from './manual-clock.ts';

/**
 * One subscription on one partition over the in-memory ports, for the engine's unit tests: the
 * engine's own functions called directly, a manual clock, and the consumers a test names.
 */
export interface EngineWorldOptions {
  readonly type: SubscriptionType;
  readonly ledgerSize?: number;
  readonly limits?: Partial<EngineLimits>;
  /** The dispatch store (default: a new one), e.g. one that loses races on purpose. */
  readonly store?: InMemoryDispatchStore;
}

export interface ConsumerOptions {
  readonly ackTimeoutMs?: number;
  readonly leaseMs?: number;
  readonly deadLetter?: DeadLetterProducer;
}

export const WORLD_PARTITION = TopicName.parse('persistent://public/default/engine-world');

export function engineWorld(options: EngineWorldOptions) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(options.ledgerSize ?? 1_000);
  const store = options.store ?? new InMemoryDispatchStore();
  const ctx: EngineContext = {
    store,
    ledger,
    clock,
    limits: { ...DEFAULT_ENGINE_LIMITS, ...options.limits },
  };
  const cursor: PartitionCursor = { partition: WORLD_PARTITION, cursorId: 'c1', type: options.type };
  const consumer = (consumerId: string, extra: ConsumerOptions = {}): DispatchConsumer => ({
    consumerId,
    ackTimeoutMs: () => extra.ackTimeoutMs ?? 0,
    leaseMs: extra.leaseMs ?? 60_000,
    ...(extra.deadLetter ? { deadLetter: extra.deadLetter } : {}),
  });
  const publish = async (count: number, extra: { deliverAtMs?: number; key?: string } = {}) => {
    await ledger.initialize(WORLD_PARTITION);
    const { positions } = await ledger.append(
      WORLD_PARTITION,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {}, ...extra })),
      clock.nowMs(),
    );
    return positions;
  };
  const subscribe = (at: 'Earliest' | 'Latest' | Position = 'Earliest') =>
    createSubscriptionCursor(ctx, cursor, at);
  const receive = async (
    consumerId: string,
    max = 10,
    extra: ConsumerOptions & { members?: readonly KeySharedMember[] } = {},
  ) => {
    const result = await dispatch(ctx, {
      cursor,
      consumer: consumer(consumerId, extra),
      max,
      ...(extra.members ? { members: extra.members } : {}),
    });
    return result.kind === 'delivered' ? result.deliveries : [];
  };
  return { clock, ledger, store, ctx, cursor, consumer, publish, subscribe, receive };
}

/** Delivered positions as `ledger:entry` strings. */
export const idsOf = (deliveries: readonly { position: Position }[]) =>
  deliveries.map((delivery) => delivery.position.toString());

/** A dead-letter producer that records what it publishes. */
export function recordingDeadLetter(maxRedeliverCount: number) {
  const published: { entries: StoredEntry[]; redeliveryCount: number }[] = [];
  const producer: DeadLetterProducer = {
    maxRedeliverCount,
    publish: async (entries, redeliveryCount) => {
      published.push({ entries: [...entries], redeliveryCount });
    },
  };
  return { producer, published };
}

/** A store whose next `lose` conditional writes of `kind` lose, as to a racing writer. */
export class RacedStore extends InMemoryDispatchStore {
  lose = { head: 0, page: 0 };

  override async casHead(...args: Parameters<InMemoryDispatchStore['casHead']>) {
    if (this.lose.head > 0) {
      this.lose.head--;
      return { ok: false as const, current: await this.readHead(args[0]) };
    }
    return super.casHead(...args);
  }

  override async casPage(...args: Parameters<InMemoryDispatchStore['casPage']>) {
    if (this.lose.page > 0) {
      this.lose.page--;
      return false;
    }
    return super.casPage(...args);
  }
}
