import type { DispatchHead } from './dispatch-head.ts';
import { ConflictError } from './errors.ts';
import { nextInLedger } from './position.ts';
import type { SubscriptionType } from './subscription-type.ts';

/** An owner's lease is written again only when less than this is left of a full lease. */
const OWNER_RENEW_AFTER_MS = 5_000;
/** How many replaced owners the head remembers, to refuse their calls (I6). */
const FENCED_REMEMBERED = 4;

/** A replaced Exclusive/Failover owner, or a second Exclusive consumer: its calls are refused (409). */
export class ConsumerFencedError extends ConflictError {}

/** Who asks for ownership of an Exclusive/Failover subscription's partition. */
export interface OwnershipClaimant {
  readonly consumerId: string;
  /** How long the consumer stays active without a call. */
  readonly leaseMs: number;
}

/** What {@link decideOwnership} found: the caller owns it (maybe renewing), takes it over, or waits. */
export type Ownership =
  | { readonly kind: 'owner'; readonly renewal?: Partial<DispatchHead> }
  | { readonly kind: 'takeover'; readonly head: DispatchHead }
  | { readonly kind: 'standby' };

/**
 * Exclusive/Failover: the owner renews its lease; a consumer finding no live owner takes over
 * (new epoch, the old owner fenced, a replay from mark-delete so that its held entries come back
 * in order); anyone else waits (Failover) or is refused (Exclusive, or a replaced owner).
 */
export function decideOwnership(
  head: DispatchHead,
  consumer: OwnershipClaimant,
  type: SubscriptionType,
  nowMs: number,
): Ownership {
  const me = consumer.consumerId;
  if (head.fenced?.includes(me)) {
    throw new ConsumerFencedError(
      `Consumer ${me} was replaced as the active consumer (epoch ${head.epoch}): subscribe again`,
    );
  }
  if (head.owner?.consumerId === me) {
    if (head.owner.leaseUntilMs - nowMs >= consumer.leaseMs - OWNER_RENEW_AFTER_MS) return { kind: 'owner' };
    return { kind: 'owner', renewal: { owner: { consumerId: me, leaseUntilMs: nowMs + consumer.leaseMs } } };
  }
  if (head.owner && head.owner.leaseUntilMs > nowMs) {
    if (type === 'Exclusive') {
      throw new ConsumerFencedError(`Exclusive subscription already has an active consumer`);
    }
    return { kind: 'standby' };
  }
  const afterMarkDelete = nextInLedger(head.markDelete);
  const dispatchedBefore = head.readPosition.compareTo(afterMarkDelete) > 0;
  const replayFrom =
    head.replayFrom && head.replayFrom.compareTo(afterMarkDelete) < 0 ? head.replayFrom : afterMarkDelete;
  const fenced = head.owner
    ? [...(head.fenced ?? []), head.owner.consumerId].slice(-FENCED_REMEMBERED)
    : head.fenced;
  const { replayFrom: _dropped, ...rest } = head;
  return {
    kind: 'takeover',
    head: {
      ...rest,
      epoch: head.epoch + 1,
      owner: { consumerId: me, leaseUntilMs: nowMs + consumer.leaseMs },
      ...(fenced ? { fenced } : {}),
      ...(dispatchedBefore || head.replayFrom ? { replayFrom } : {}),
    },
  };
}
