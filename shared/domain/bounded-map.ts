/** How many entries each per-container cache or hint keeps by default. */
export const MAX_CONTAINER_ENTRIES = 10_000;

/**
 * A map of at most `maxEntries` entries, for what a container (a Lambda execution environment)
 * keeps between calls: setting a key makes it the newest, and once one more is set the oldest
 * goes. Reads do not renew an entry (eviction is by setting order, not by use). In memory only;
 * cost: constant per call.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly maxEntries = MAX_CONTAINER_ENTRIES) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
