import { BoundedMap } from '../domain/bounded-map.ts';
import type { Position } from '../domain/position.ts';
import type { RetentionRequest } from '../domain/retention-plan.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { Clock } from '../ports/clock.ts';
import type {
  Appended,
  AppendOptions,
  CachedLedger,
  Ledger,
  ManagedLedgerState,
  NewEntry,
  ReadEntriesOptions,
  Renewed,
  StoredEntry,
  Trimmed,
} from '../ports/ledger.ts';

/** How old a ledger state `recentState` may answer (the dispatcher's idle path). */
export const LEDGER_STATE_TTL_MS = 1_000;

/**
 * This container's ledger states and ledger owners, in front of the ledger. At most 10,000 of
 * each, the oldest read going first. Every Ledger method reads and writes the store, uncached. In
 * memory; cost: none per hit.
 *
 * Ledger states, one per partition (`recentState`, `firstUnwritten`):
 * - Caches: the state last read by either.
 * - TTL: `recentState` answers a state it read itself within LEDGER_STATE_TTL_MS (1 s); a state
 *   `firstUnwritten` read is not dated, so the next `recentState` reads again. `firstUnwritten`
 *   trusts any remembered state, whatever its age, for positions it already holds.
 * - Invalidation: none. A state only grows (ledgers are added, entries appended), so a remembered
 *   one is a lower bound of what is written: `firstUnwritten` reads again for any position past
 *   it, and a partition deleted and created again has ledgers of new ids, never found in the old
 *   state.
 * - Why a stale read is safe: for the dispatcher's idle path (nothing visible at the read
 *   position: is it caught up, or does a new ledger follow?) a stale state only delays that
 *   decision by the TTL, since entries are read from the ledger itself whatever the state says;
 *   for `firstUnwritten` (is an acknowledged position a written entry?) a lower bound answers
 *   "written" only for what was written.
 *
 * Ledger owners (`knownOwnerOf`):
 * - Caches: each owner found (not a missing one), with no TTL and no invalidation.
 * - Why a stale read is safe: a ledger id belongs to one partition for ever (ids are unique
 *   across the deployment and never reused), so the answer never names another partition; a
 *   purged ledger's owner is still answered, and its entries then read as absent.
 */
export class CachingLedger implements CachedLedger {
  private readonly states = new BoundedMap<string, { state: ManagedLedgerState; readAtMs?: number }>();
  private readonly owners = new BoundedMap<string, TopicName>();

  constructor(
    private readonly store: Ledger,
    private readonly clock: Clock,
    private readonly stateTtlMs = LEDGER_STATE_TTL_MS,
  ) {}

  async recentState(partition: TopicName): Promise<ManagedLedgerState | undefined> {
    const key = partition.toString();
    const known = this.states.get(key);
    if (known?.readAtMs !== undefined && this.clock.nowMs() - known.readAtMs < this.stateTtlMs) {
      return known.state;
    }
    // Reads go through this decorator's own methods: a wrapper that counts the port's reads counts them.
    const state = await this.state(partition);
    if (state) this.states.set(key, { state, readAtMs: this.clock.nowMs() });
    else this.states.delete(key);
    return state;
  }

  async firstUnwritten(partition: TopicName, positions: readonly Position[]): Promise<Position | undefined> {
    const key = partition.toString();
    const known = this.states.get(key);
    if (known && firstMissing(known.state, positions) === undefined) return undefined;
    const state = await this.state(partition);
    if (!state) {
      this.states.delete(key);
      return positions[0];
    }
    this.states.set(key, { state });
    return firstMissing(state, positions);
  }

  async knownOwnerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    const key = ledgerId.toString();
    const known = this.owners.get(key);
    if (known) return known;
    const owner = await this.ownerOf(ledgerId);
    if (owner) this.owners.set(key, owner);
    return owner;
  }

  initialize(partition: TopicName): Promise<ManagedLedgerState> {
    return this.store.initialize(partition);
  }

  append(
    partition: TopicName,
    entries: readonly NewEntry[],
    publishTimeMs: number,
    options?: AppendOptions,
  ): Promise<Appended> {
    return this.store.append(partition, entries, publishTimeMs, options);
  }

  announceSubscriptions(partition: TopicName): Promise<ManagedLedgerState> {
    return this.store.announceSubscriptions(partition);
  }

  state(partition: TopicName): Promise<ManagedLedgerState | undefined> {
    return this.store.state(partition);
  }

  ownerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    return this.store.ownerOf(ledgerId);
  }

  readEntry(position: Position): Promise<StoredEntry | undefined> {
    return this.store.readEntry(position);
  }

  readEntries(
    ledgerId: bigint,
    firstEntryId: bigint,
    lastEntryId: bigint,
    options?: ReadEntriesOptions,
  ): Promise<StoredEntry[]> {
    return this.store.readEntries(ledgerId, firstEntryId, lastEntryId, options);
  }

  firstWrittenAfter(
    ledgerId: bigint,
    entryId: bigint,
  ): Promise<{ position: Position; publishTimeMs: number } | undefined> {
    return this.store.firstWrittenAfter(ledgerId, entryId);
  }

  detachPartition(partition: TopicName, firstLedgerId: bigint): Promise<void> {
    return this.store.detachPartition(partition, firstLedgerId);
  }

  purgeLedger(ledgerId: bigint, maxItems: number): Promise<boolean> {
    return this.store.purgeLedger(ledgerId, maxItems);
  }

  trim(
    partition: TopicName,
    request: RetentionRequest & { readonly maxBatches: number },
  ): Promise<Trimmed | undefined> {
    return this.store.trim(partition, request);
  }

  renewExpiry(
    partition: TopicName,
    request: { readonly nowMs: number; readonly maxBatches: number },
  ): Promise<Renewed | undefined> {
    return this.store.renewExpiry(partition, request);
  }
}

function firstMissing(state: ManagedLedgerState, positions: readonly Position[]): Position | undefined {
  return positions.find((position) => {
    const ledger = state.ledgers.find((info) => info.ledgerId === position.ledgerId);
    return ledger === undefined || position.entryId >= ledger.entries;
  });
}
