import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { comparePositionText, fail } from './sim-oracle.ts';

/**
 * The consumer-path simulation's oracle: what the clients saw (each delivery with its count, when
 * and to whom; acknowledgements that returned; nacks; the calls that may have released what a
 * consumer held), and the checks made at every delivery (issue 21, criterion 3). Times are true
 * times (the deployment's clock plus what the invocation waited, without its host's skew); each
 * invocation's clock runs ahead of it by 0 to `skewMs`, so a time an invocation set may come
 * early by up to `skewMs` in true time, and no more: that is the checks' only slack.
 */

/** A message a client holds (received, not acknowledged, nacked or given back by it). */
export interface HeldMessage {
  readonly position: string;
  readonly messageId: string;
  readonly handle: string;
  readonly count: number;
  readonly key: string | null;
  /** True time its receive returned. */
  readonly atMs: number;
  /** Seq at which its receive returned. */
  readonly seq: number;
}

/** A consumer as its client sees it. */
export interface PathClient {
  readonly index: number;
  id?: string;
  state: 'open' | 'gone';
  held: HeldMessage[];
  /** Seq at which a call that may have given back what it holds last started (its close, redeliver, nack; a lapse; any scheduler or maintenance run). */
  releasedSinceSeq: number;
  /** An ordered consumer's receive failed after it may have claimed: it redelivers (rewinds) before going on. */
  mustRewind: boolean;
  /**
   * Seq at which this consumer's last redeliverUnacknowledged ended: it may have given back what a
   * receive running alongside handed it before then (due at once), so a nack of that finds nothing.
   */
  gaveBackAtSeq?: number;
  /** A Lambda consumer's (consumer-path-runner.ts) ack timeout: its function's timeout plus a margin, whatever the count. */
  readonly ackTimeoutMs?: number;
}

interface Seen {
  readonly consumer: number;
  readonly count: number;
  readonly atMs: number;
  readonly seq: number;
  /** Seq at which its receive started. */
  readonly startSeq: number;
}

/**
 * An admin's reset of the cursor (by timestamp, MessageId, earliest or latest): what it covers is
 * unacknowledged again and handed out as first deliveries (count 0). While it runs (and when it died
 * or failed, until no head says a reset is under way: the engine finishes it later, clearing the
 * acknowledgements made meanwhile) it covers every partition from its first entry; once answered, each
 * partition it moved from the new read position on (`scope`: partition index -> `L:E`).
 */
export interface PathReset {
  readonly startSeq: number;
  scope?: ReadonlyMap<number, string>;
  doneSeq?: number;
}

/** What the oracle needs to know of the script. */
export interface PathPolicy {
  readonly type: SubscriptionType;
  readonly skewMs: number;
  readonly deadLetter?: number;
  /** The delay before an unacknowledged delivery of `count` is redelivered (0: never). */
  readonly ackTimeoutDelayMs: (count: number) => number;
  readonly nackDelayMs: (count: number) => number;
}

export class PathOracle {
  private seq = 0;
  /** position -> its deliveries, in order. */
  readonly deliveries = new Map<string, Seen[]>();
  /** position -> seq at which an acknowledgement of it returned. */
  readonly acked = new Map<string, number>();
  /** position -> the nack that released it: the true time it is due at the earliest, and its seq. */
  private readonly nacked = new Map<string, { dueAtMs: number; seq: number }>();
  /** Whether redelivery counts are still exact (no receive failed or died after it may have claimed). */
  exact = true;
  /** Further checks of each delivery (the drain's included): an operator's reschedule (issue 24). */
  afterDelivery?: (message: HeldMessage) => void;
  /** Ack-timeout redeliveries seen (checked never early). */
  ackTimeoutsFired = 0;
  redeliveredTwice = 0;
  /** Deliveries of an entry delivered before a reset that covered it (what a reset gave back, again). */
  redeliveredAfterReset = 0;
  /** The admin's resets, started or done. */
  readonly resets: PathReset[] = [];
  /** Every position an acknowledgement of was recorded for (a reset since or not). */
  readonly everAcked = new Set<string>();
  /** Exclusive, Failover: per partition index, the consumers (client indexes) that received from it, in the order they took it. */
  private readonly owners = new Map<number, number[]>();
  /** Deliveries whose consumer's ownership of the partition was checked (I6). */
  ownershipChecks = 0;

  constructor(
    private readonly policy: PathPolicy,
    private readonly clients: PathClient[],
    /** The partition index of an `L:E` position (from the message ids seen). */
    private readonly partitionOf: (position: string) => number | undefined = () => undefined,
  ) {}

  private covers(reset: PathReset, position: string): boolean {
    if (!reset.scope) return true;
    const from = reset.scope.get(this.partitionOf(position) ?? -2);
    return from !== undefined && comparePositionText(position, from) >= 0;
  }

  /** A reset of `position` that may be applying now, or that ended after `since`. */
  resetOverlaps(position: string, since: number): boolean {
    return this.resets.some(
      (r) => this.covers(r, position) && (r.doneSeq === undefined || r.doneSeq > since),
    );
  }

  /** The last seq a finished reset of `position` ended at (its counts restart), -1 for none. */
  private resetBarrier(position: string): number {
    return this.resets.reduce(
      (barrier, r) => (this.covers(r, position) ? Math.max(barrier, r.doneSeq ?? Infinity) : barrier),
      -1,
    );
  }

  /** A reset starts: anything may come back as a first delivery, counts are no longer exact. */
  startReset(startSeq: number): PathReset {
    const reset: PathReset = { startSeq };
    this.resets.push(reset);
    this.exact = false;
    this.releaseAll(startSeq);
    return reset;
  }

  /** A reset ended at `seq` (answered with `scope`, or, undefined, died or failed and since finished by the engine): what it covers is unacknowledged. */
  finishReset(reset: PathReset, seq: number, scope?: ReadonlyMap<number, string>): void {
    if (scope) reset.scope = scope;
    reset.doneSeq = seq;
    for (const position of [...this.acked.keys()])
      if (this.covers(reset, position)) this.acked.delete(position);
    for (const position of [...this.nacked.keys()])
      if (this.covers(reset, position)) this.nacked.delete(position);
  }

  private get shared(): boolean {
    return this.policy.type === 'Shared' || this.policy.type === 'Key_Shared';
  }

  next(): number {
    this.seq++;
    return this.seq;
  }

  get now(): number {
    return this.seq;
  }

  /** Every client may have had what it holds given back, from `seq` on (maintenance, the scheduler). */
  releaseAll(seq: number): void {
    for (const client of this.clients) client.releasedSinceSeq = Math.max(client.releasedSinceSeq, seq);
  }

  /** An operator moved the entry's due time (earlier, it may be): a nack's backoff no longer bounds it. */
  rescheduled(position: string): void {
    this.nacked.delete(position);
  }

  /** An acknowledgement of `position` returned at `seq` (its call started at `startSeq`), unless a reset may have undone it. */
  acknowledged(position: string, seq: number, startSeq = seq): void {
    this.everAcked.add(position);
    if (this.resetOverlaps(position, startSeq)) return;
    if (!this.acked.has(position)) this.acked.set(position, seq);
  }

  /**
   * `client` nacked `message` at true time `atMs` (its call started at `startSeq`): when it still
   * held it (its last delivery, its ack timeout not reached), the nack released it, due after the
   * backoff for its count.
   */
  nack(
    client: PathClient,
    message: HeldMessage,
    call: { startSeq: number; atMs: number; endSeq: number; delayMs?: number | undefined },
  ): boolean {
    const last = this.deliveries.get(message.position)?.at(-1);
    const timeoutMs = this.timeoutOf(client, message.count);
    const timedOut = timeoutMs > 0 && call.atMs >= message.atMs + timeoutMs - this.policy.skewMs;
    if (!last || last.consumer !== client.index || last.count !== message.count || timedOut) return false;
    // Given back by the consumer's own redeliverUnacknowledged after this delivery (`--seed 6`,
    // Key_Shared: it came back at once, with count + 1, and the nack released nothing).
    if ((client.gaveBackAtSeq ?? 0) > message.seq) return false;
    this.nacked.set(message.position, {
      dueAtMs: call.atMs + (call.delayMs ?? this.policy.nackDelayMs(message.count)) - this.policy.skewMs,
      seq: call.endSeq,
    });
    return true;
  }

  /** The delay before `client`'s unacknowledged delivery of `count` is redelivered (0: never). */
  private timeoutOf(client: PathClient | undefined, count: number): number {
    return client?.ackTimeoutMs ?? this.policy.ackTimeoutDelayMs(count);
  }

  /** Checks one delivery to `client` by a receive that started at `startSeq` (true time `atMs` at its return). */
  delivered(client: PathClient, message: HeldMessage, startSeq: number): void {
    const { position, count, atMs } = message;
    const ackSeq = this.acked.get(position);
    // A reset that may have applied since (running, or dead before its round ended) may have undone it.
    if (ackSeq !== undefined && ackSeq < startSeq && !this.resetOverlaps(position, ackSeq)) {
      fail(
        'I1',
        `${position} was acknowledged (seq ${ackSeq}) before the receive of consumer ${client.index} started (seq ${startSeq})`,
      );
    }
    const all = this.deliveries.get(position) ?? [];
    // Counts restart at a reset: only what was delivered after the last one that covered it counts.
    const barrier = this.resetBarrier(position);
    const earlier = all.filter((seen) => seen.startSeq > barrier);
    if (earlier.length < all.length) this.redeliveredAfterReset++;
    const last = earlier.at(-1);
    const countChecked = !this.resetOverlaps(position, startSeq);
    if (countChecked && last && count <= last.count) {
      fail(
        'I4',
        `${position} delivered with count ${count} after an earlier delivery with count ${last.count}`,
      );
    }
    if (countChecked && this.exact && count !== earlier.length) {
      fail('I4', `${position} delivered with count ${count} after ${earlier.length} earlier deliveries`);
    }
    if (count >= 2) this.redeliveredTwice++;
    const { deadLetter } = this.policy;
    if (this.shared && deadLetter !== undefined && count > deadLetter) {
      fail('DL', `${position} delivered with count ${count}, past maxRedeliverCount ${deadLetter}`);
    }
    if (!this.shared) this.checkOwner(client, position);
    if (this.shared) {
      this.checkOneHolder(client, message);
      if (last && countChecked) this.checkRedeliveryTime(message, last, startSeq);
    }
    all.push({ consumer: client.index, count, atMs, seq: message.seq, startSeq });
    this.deliveries.set(position, all);
    this.afterDelivery?.(message);
  }

  /**
   * I6, Exclusive and Failover: a consumer another took the partition over from never receives from
   * it again (the head's owner and epoch fence it), as the engine simulation checks it.
   */
  private checkOwner(client: PathClient, position: string): void {
    const partition = this.partitionOf(position) ?? -1;
    const owners = this.owners.get(partition) ?? [];
    this.owners.set(partition, owners);
    const at = owners.indexOf(client.index);
    if (at === -1) owners.push(client.index);
    else if (at !== owners.length - 1) {
      fail(
        'I6',
        `consumer ${client.index} received ${position} (partition ${partition}) after consumer ${owners.at(-1)} took the partition over`,
      );
    }
    this.ownershipChecks++;
  }

  /** Shared, Key_Shared: no other consumer holds the entry, unless something gave it back since. */
  private checkOneHolder(client: PathClient, message: HeldMessage): void {
    for (const other of this.clients) {
      if (other === client || other.state !== 'open') continue;
      const held = other.held.find((h) => h.position === message.position);
      if (!held || other.releasedSinceSeq > held.seq) continue;
      // A reset applying since it was handed out (one that died may still be) gives it back: it is
      // handed out again as a first delivery (a reset runs after a receive in its container).
      if (this.resetOverlaps(message.position, held.seq)) continue;
      const timeoutMs = this.timeoutOf(other, held.count);
      if (timeoutMs > 0 && message.atMs >= held.atMs + timeoutMs - this.policy.skewMs) continue;
      fail(
        'holder',
        `${message.position} handed to consumer ${client.index} while consumer ${other.index} holds it (count ${held.count}, since ${held.atMs})`,
      );
    }
  }

  /**
   * Shared, Key_Shared: a redelivery that no release explains came by its ack timeout, never
   * early; one after a nack came no earlier than its backoff.
   */
  private checkRedeliveryTime(message: HeldMessage, last: Seen, startSeq: number): void {
    const nack = this.nacked.get(message.position);
    if (nack && nack.seq > last.seq) {
      if (message.atMs < nack.dueAtMs) {
        fail(
          'I5',
          `${message.position} redelivered at ${message.atMs}, before its nack backoff ended at ${nack.dueAtMs}`,
        );
      }
      return;
    }
    const holder = this.clients[last.consumer];
    if (!holder || holder.releasedSinceSeq > last.seq || holder.state !== 'open') return;
    if (!holder.held.some((h) => h.position === message.position && h.count === last.count)) return;
    if (startSeq < last.seq) return;
    const timeoutMs = this.timeoutOf(holder, last.count);
    if (timeoutMs === 0) {
      fail(
        'I5',
        `${message.position} redelivered with count ${message.count} while consumer ${last.consumer} held it, with no ack timeout and nothing that gave it back`,
      );
    }
    if (message.atMs < last.atMs + timeoutMs - this.policy.skewMs) {
      fail(
        'I5',
        `${message.position} redelivered at ${message.atMs}, before its ack timeout ended at ${last.atMs + timeoutMs}`,
      );
    }
    this.ackTimeoutsFired++;
  }
}
