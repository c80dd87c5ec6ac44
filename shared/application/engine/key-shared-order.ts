import type { Position } from '../../domain/position.ts';
import type { StoredEntry } from '../../ports/ledger.ts';

/**
 * The key an entry is routed by on Key_Shared: its message key, or its position when it has none
 * (Pulsar routes a message without a key by a key of its own, so such messages are never held
 * back by one another).
 */
export function stickyKeyOf(entry: StoredEntry): string {
  return entry.key ?? entry.position.toString();
}

/**
 * Key_Shared, within one redelivery-tracker pickup for one member: the keys of this member's
 * entries that the pickup leaves in the tracker (another member's stretch of a run in front of
 * them, the call's max, the answer's byte budget, a later stretch of an entry whose first was
 * taken), so that no later entry of those keys is taken after them in the same pickup (I3: a
 * member receives a key's messages in log order). The tracker gives entries in due-time order,
 * which for entries routed to a member is log order, but a pickup takes only one stretch of each
 * tracker entry: without this, a pickup that left `m79` in one entry took `m89` from the next.
 * When an entry of this member's could not be read, its key is not known and every key is held
 * back. Not persisted: it lives for one pickup (the entries it names stay in the tracker, and the
 * next pickup meets them first).
 *
 * For a recently joined member it also holds the keys other members still hold entries of before
 * its join mark (see keysHeldByOthers): an entry of such a key after the held one waits (`draining`).
 */
export class KeysLeftBehind {
  private readonly keys = new Set<string>();
  private unknown = false;

  constructor(private readonly draining?: Draining) {}

  /** This member's `entry` stays in the tracker. */
  leave(entry: StoredEntry): void {
    this.keys.add(stickyKeyOf(entry));
  }

  /** An entry of this member's, or maybe of this member's, stays in the tracker unread. */
  leaveUnread(): void {
    this.unknown = true;
  }

  /**
   * Whether `entry` must stay too, and why: `behind`, an earlier entry of its key was left by this
   * pickup; `draining`, another member holds an earlier entry of its key (this member joined since).
   */
  holdsBack(entry: StoredEntry): 'behind' | 'draining' | undefined {
    if (this.unknown || this.keys.has(stickyKeyOf(entry))) return 'behind';
    const draining = this.draining;
    if (!draining || entry.position.compareTo(draining.upTo) > 0) return undefined;
    if (!draining.heldByOthers) return 'draining'; // not known: nothing before the join mark
    const held = draining.heldByOthers.get(stickyKeyOf(entry));
    return held && held.compareTo(entry.position) < 0 ? 'draining' : undefined;
  }

  /** Whether anything of this member's was left. */
  get any(): boolean {
    return this.unknown || this.keys.size > 0;
  }
}

/** A recently joined member's join mark, and what other members hold before it (see keysHeldByOthers). */
export interface Draining {
  readonly upTo: Position;
  /** Per key, the first position another member holds; undefined: not known (too long a window). */
  readonly heldByOthers: ReadonlyMap<string, Position> | undefined;
}
