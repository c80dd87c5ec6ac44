import { describe, expect, it } from 'vitest';
import {
  CachingConsumerRegistry,
  CONSUMER_RECORD_TTL_MS,
} from '../../../shared/adapters/caching-consumer-registry.ts';
import type { ConsumerRecord } from '../../../shared/ports/consumer-registry.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { ManualClock } from '../../support/manual-clock.ts';

/** The in-memory registry, counting its record reads. */
class CountingRegistry extends InMemoryConsumerRegistry {
  gets = 0;

  override async get(consumerId: string): Promise<ConsumerRecord | undefined> {
    this.gets++;
    return super.get(consumerId);
  }
}

const record = { consumerId: 'c1', topic: 'persistent://public/default/t' } as ConsumerRecord;

function cached() {
  const store = new CountingRegistry();
  const clock = new ManualClock(1_000);
  return { store, clock, registry: new CachingConsumerRegistry(store, clock) };
}

describe('CachingConsumerRegistry', () => {
  it('reads a consumer record once per CONSUMER_RECORD_TTL_MS, and again at once after forget', async () => {
    const { store, clock, registry } = cached();
    await store.register(record);

    expect(await registry.recent('c1')).toEqual(record);
    expect(await registry.recent('c1')).toEqual(record);
    expect(store.gets).toBe(1);
    clock.advance(CONSUMER_RECORD_TTL_MS);
    await registry.recent('c1');
    expect(store.gets).toBe(2);
    // Closed through another container: this one sees it once it forgets its copy.
    await store.delete('c1');
    registry.forget('c1');
    expect(await registry.recent('c1')).toBeUndefined();
    expect(store.gets).toBe(3);
  });

  it('does not remember a missing consumer', async () => {
    const { store, registry } = cached();

    await registry.recent('nobody');
    await registry.recent('nobody');

    expect(store.gets).toBe(2);
  });

  it('forgets the record it deletes: the next recent read finds the consumer gone', async () => {
    const { store, registry } = cached();
    await store.register(record);
    await registry.recent('c1');

    await registry.delete('c1');

    expect(await registry.recent('c1')).toBeUndefined();
    expect(store.gets).toBe(2);
  });

  it('reads the store on every get: only recent is cached', async () => {
    const { store, registry } = cached();
    await store.register(record);
    await registry.recent('c1');

    await registry.get('c1');
    await registry.get('c1');

    expect(store.gets).toBe(3);
  });
});
