import { describe, expect, it } from 'vitest';
import { CachingHandleKeyStore } from '../../../shared/adapters/caching-handle-key-store.ts';
import type { HandleKeyStore } from '../../../shared/ports/handle-key-store.ts';

/** A key store that counts its loads and fails the ones it is told to. */
class CountingKeyStore implements HandleKeyStore {
  loads = 0;
  failNext = 0;

  async loadOrCreate(): Promise<Uint8Array> {
    this.loads++;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('throttled');
    }
    return Buffer.alloc(32, this.loads);
  }
}

describe('CachingHandleKeyStore', () => {
  it('loads once per process, however many handles and concurrent first calls', async () => {
    const store = new CountingKeyStore();
    const cached = new CachingHandleKeyStore(store);

    const keys = await Promise.all(Array.from({ length: 5 }, () => cached.loadOrCreate()));
    const later = await cached.loadOrCreate();

    expect(store.loads).toBe(1);
    expect(new Set([...keys, later]).size).toBe(1);
  });

  it('keeps no failed load: the next call tries again', async () => {
    const store = new CountingKeyStore();
    store.failNext = 1;
    const cached = new CachingHandleKeyStore(store);

    await expect(cached.loadOrCreate()).rejects.toThrow('throttled');
    const key = await cached.loadOrCreate();

    expect(store.loads).toBe(2);
    expect(key).toEqual(Buffer.alloc(32, 2));
  });
});
