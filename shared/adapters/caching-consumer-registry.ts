import { BoundedMap } from '../domain/bounded-map.ts';
import type { Clock } from '../ports/clock.ts';
import type { CachedConsumerRegistry, ConsumerRecord, ConsumerRegistry } from '../ports/consumer-registry.ts';

/**
 * How long a container trusts a consumer record it read: a consumer closed through another
 * container is noticed here within this long (its calls here go on meanwhile, as a Pulsar client
 * learns of a broker-side close only on its next request).
 */
export const CONSUMER_RECORD_TTL_MS = 5_000;

/**
 * This container's consumer records, in front of the registry.
 *
 * - Caches: each record `recent` found (not a missing one: a consumer subscribed through another
 *   container is found at once), at most 10,000, the oldest read going first.
 * - TTL: CONSUMER_RECORD_TTL_MS (5 s) from the read.
 * - Invalidation: `delete` through this decorator forgets the record; `forget` forgets it when
 *   another write made it stale (a deletion job's removal) or a call must see a close at once (a
 *   receive after each wait).
 * - Why a stale read is safe: a record never changes once registered, it is only deleted, so a
 *   stale copy is that of a consumer closed, or removed after its lease lapsed, within the TTL.
 *   Its calls then act as if they came just before the close: every claim is a compare-and-set
 *   of the head, a release of what a closed consumer held runs again after any call that may
 *   have raced the close (CLOSE_SECOND_PASS_MS), and a receive reads the record afresh after
 *   each wait before it claims anything.
 *
 * Every ConsumerRegistry method reads and writes the store, uncached. In memory; cost: none per hit.
 */
export class CachingConsumerRegistry implements CachedConsumerRegistry {
  private readonly records = new BoundedMap<string, { record: ConsumerRecord; untilMs: number }>();

  constructor(
    private readonly store: ConsumerRegistry,
    private readonly clock: Clock,
    private readonly ttlMs = CONSUMER_RECORD_TTL_MS,
  ) {}

  async recent(consumerId: string): Promise<ConsumerRecord | undefined> {
    const now = this.clock.nowMs();
    const known = this.records.get(consumerId);
    if (known && known.untilMs > now) return known.record;
    // Through this decorator's own `get`: a wrapper that counts the port's reads counts this one.
    const record = await this.get(consumerId);
    if (record) this.records.set(consumerId, { record, untilMs: now + this.ttlMs });
    else this.records.delete(consumerId);
    return record;
  }

  forget(consumerId: string): void {
    this.records.delete(consumerId);
  }

  register(record: ConsumerRecord): Promise<void> {
    return this.store.register(record);
  }

  get(consumerId: string): Promise<ConsumerRecord | undefined> {
    return this.store.get(consumerId);
  }

  async delete(consumerId: string): Promise<void> {
    await this.store.delete(consumerId);
    this.forget(consumerId);
  }

  heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void> {
    return this.store.heartbeat(subscriptionKey, consumerId, untilMs);
  }

  leave(subscriptionKey: string, consumerId: string): Promise<void> {
    return this.store.leave(subscriptionKey, consumerId);
  }

  members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return this.store.members(subscriptionKey, nowMs);
  }

  expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return this.store.expired(subscriptionKey, nowMs);
  }

  leases(subscriptionKey: string): Promise<{ readonly consumerId: string; readonly untilMs: number }[]> {
    return this.store.leases(subscriptionKey);
  }
}
