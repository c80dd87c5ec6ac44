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
 */
export class KeysLeftBehind {
  private readonly keys = new Set<string>();
  private unknown = false;

  /** This member's `entry` stays in the tracker. */
  leave(entry: StoredEntry): void {
    this.keys.add(stickyKeyOf(entry));
  }

  /** An entry of this member's, or maybe of this member's, stays in the tracker unread. */
  leaveUnread(): void {
    this.unknown = true;
  }

  /** Whether `entry` must stay too: an earlier entry of its key was left. */
  holdsBack(entry: StoredEntry): boolean {
    return this.unknown || this.keys.has(stickyKeyOf(entry));
  }

  /** Whether anything of this member's was left. */
  get any(): boolean {
    return this.unknown || this.keys.size > 0;
  }
}
