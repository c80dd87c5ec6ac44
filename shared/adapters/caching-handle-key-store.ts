import type { HandleKeyStore } from '../ports/handle-key-store.ts';

/**
 * Keeps the handle key for the life of the process (a Lambda execution environment): one read per
 * cold start, none per handle. No TTL: the key never changes once made (a key deleted by an
 * operator reaches new execution environments only, and the old ones refuse the new key's
 * handles until they end). Concurrent first calls share one load; a failed load is not kept, so
 * the next call tries again.
 */
export class CachingHandleKeyStore implements HandleKeyStore {
  private loading: Promise<Uint8Array> | undefined;

  constructor(private readonly store: HandleKeyStore) {}

  loadOrCreate(): Promise<Uint8Array> {
    this.loading ??= this.store.loadOrCreate().catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }
}
