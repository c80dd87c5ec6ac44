import { randomBytes } from 'node:crypto';
import { DELIVERY_HANDLE_KEY_BYTES } from '../../shared/domain/delivery-handle.ts';
import type { HandleKeyStore } from '../../shared/ports/handle-key-store.ts';

/** Where in-memory handle key stores keep the key: share one to play several processes of a deployment. */
export class InMemoryHandleKeyTable {
  key: Uint8Array | undefined;
}

/** The handle key in memory: made on first use, the same for every store over one table. */
export class InMemoryHandleKeyStore implements HandleKeyStore {
  constructor(
    private readonly table = new InMemoryHandleKeyTable(),
    private readonly random: (bytes: number) => Uint8Array = randomBytes,
  ) {}

  async loadOrCreate(): Promise<Uint8Array> {
    this.table.key ??= this.random(DELIVERY_HANDLE_KEY_BYTES);
    return this.table.key;
  }
}
