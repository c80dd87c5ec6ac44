import type { StoredEntry } from '../../ports/ledger.ts';

/** One entries item as read or written: its first entry id and its entries, in order. */
export interface CachedChunk {
  readonly ledgerId: bigint;
  readonly firstEntryId: bigint;
  readonly entries: readonly StoredEntry[];
  /** Approximate bytes it holds (payloads, keys, properties). */
  readonly bytes: number;
  /**
   * Its expiry as read or written (epoch ms; none: it never expires). Maintenance may renew it
   * since: a cached chunk past this is read again rather than returned.
   */
  readonly expiresAtMs?: number;
}

/** What one process keeps by default: a few thousand publish batches of small messages. */
export const DEFAULT_CHUNK_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The entries chunks this process (one Lambda container) wrote or read, newest kept, up to a size.
 * An entries item never changes once written (ledger ids are never reused; an entry is deleted
 * only with its ledger, and `forgetLedger` drops it then), so a cached chunk is what a strongly
 * consistent read would return: the dispatcher's read of the entries at a read position costs no
 * Query when this container published them or read them before (a lost compare-and-set retried, a
 * neighbouring receive). On AWS each container has its own cache: how often it hits depends on how
 * many containers share the traffic (the bench runs the functions as a pool of containers).
 */
export class EntryChunkCache {
  private readonly chunks = new Map<string, CachedChunk>();
  /** Per ledger, the first entry ids of its cached chunks, ascending. */
  private readonly starts = new Map<bigint, bigint[]>();
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_CHUNK_CACHE_BYTES) {}

  /** The cached chunk holding (ledgerId, entryId), if any. */
  covering(ledgerId: bigint, entryId: bigint): CachedChunk | undefined {
    const starts = this.starts.get(ledgerId);
    if (!starts || starts.length === 0) return undefined;
    let low = 0;
    let high = starts.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if ((starts[middle] as bigint) <= entryId) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    if (found < 0) return undefined;
    const key = keyOf(ledgerId, starts[found] as bigint);
    const chunk = this.chunks.get(key);
    if (!chunk || entryId >= chunk.firstEntryId + BigInt(chunk.entries.length)) return undefined;
    // Most recently used last, so eviction takes the least recently used.
    this.chunks.delete(key);
    this.chunks.set(key, chunk);
    return chunk;
  }

  /**
   * Whether a chunk holding (ledgerId, entryId) can only start at entryId: a cached chunk ends just
   * before it (chunks of a ledger are contiguous and never overlap), or it is the ledger's first.
   */
  startsAt(ledgerId: bigint, entryId: bigint): boolean {
    if (entryId === 0n) return true;
    const before = this.covering(ledgerId, entryId - 1n);
    return before !== undefined && before.firstEntryId + BigInt(before.entries.length) === entryId;
  }

  put(chunk: CachedChunk): void {
    if (chunk.entries.length === 0 || chunk.bytes > this.maxBytes) return;
    const key = keyOf(chunk.ledgerId, chunk.firstEntryId);
    const previous = this.chunks.get(key);
    if (previous) {
      this.chunks.delete(key);
      this.bytes -= previous.bytes;
    } else {
      const starts = this.starts.get(chunk.ledgerId) ?? [];
      starts.splice(insertionIndex(starts, chunk.firstEntryId), 0, chunk.firstEntryId);
      this.starts.set(chunk.ledgerId, starts);
    }
    this.chunks.set(key, chunk);
    this.bytes += chunk.bytes;
    while (this.bytes > this.maxBytes) {
      const oldest = this.chunks.values().next().value as CachedChunk;
      this.remove(oldest);
    }
  }

  /** Drops one chunk (retention deleted it). Other containers' copies age out with use. */
  forget(ledgerId: bigint, firstEntryId: bigint): void {
    const chunk = this.chunks.get(keyOf(ledgerId, firstEntryId));
    if (chunk) this.remove(chunk);
  }

  /** Drops every chunk of a ledger being deleted. */
  forgetLedger(ledgerId: bigint): void {
    for (const start of [...(this.starts.get(ledgerId) ?? [])]) {
      const chunk = this.chunks.get(keyOf(ledgerId, start));
      if (chunk) this.remove(chunk);
    }
    this.starts.delete(ledgerId);
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  private remove(chunk: CachedChunk): void {
    this.chunks.delete(keyOf(chunk.ledgerId, chunk.firstEntryId));
    this.bytes -= chunk.bytes;
    const starts = this.starts.get(chunk.ledgerId);
    if (!starts) return;
    const index = insertionIndex(starts, chunk.firstEntryId) - 1;
    if (starts[index] === chunk.firstEntryId) starts.splice(index, 1);
    if (starts.length === 0) this.starts.delete(chunk.ledgerId);
  }
}

function keyOf(ledgerId: bigint, firstEntryId: bigint): string {
  return `${ledgerId}:${firstEntryId}`;
}

/** Where `value` goes in ascending `values` (after any equal one). */
function insertionIndex(values: readonly bigint[], value: bigint): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((values[middle] as bigint) <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Approximate bytes of a chunk's entries (what a cache entry holds). */
export function chunkBytes(entries: readonly StoredEntry[]): number {
  let bytes = 0;
  for (const entry of entries) {
    bytes += 64 + entry.payload.length + (entry.key?.length ?? 0);
    for (const [name, value] of Object.entries(entry.properties ?? {})) bytes += name.length + value.length;
  }
  return bytes;
}
