import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { fail } from './sim-oracle.ts';

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
}

interface Seen {
  readonly consumer: number;
  readonly count: number;
  readonly atMs: number;
  readonly seq: number;
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
  /** Ack-timeout redeliveries seen (checked never early). */
  ackTimeoutsFired = 0;
  redeliveredTwice = 0;

  constructor(
    private readonly policy: PathPolicy,
    private readonly clients: PathClient[],
  ) {}

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

  acknowledged(position: string, seq: number): void {
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
    call: { startSeq: number; atMs: number; endSeq: number },
  ): void {
    const last = this.deliveries.get(message.position)?.at(-1);
    const timeoutMs = this.policy.ackTimeoutDelayMs(message.count);
    const timedOut = timeoutMs > 0 && call.atMs >= message.atMs + timeoutMs - this.policy.skewMs;
    if (!last || last.consumer !== client.index || last.count !== message.count || timedOut) return;
    // Given back by the consumer's own redeliverUnacknowledged after this delivery (`--seed 6`,
    // Key_Shared: it came back at once, with count + 1, and the nack released nothing).
    if ((client.gaveBackAtSeq ?? 0) > message.seq) return;
    this.nacked.set(message.position, {
      dueAtMs: call.atMs + this.policy.nackDelayMs(message.count) - this.policy.skewMs,
      seq: call.endSeq,
    });
  }

  /** Checks one delivery to `client` by a receive that started at `startSeq` (true time `atMs` at its return). */
  delivered(client: PathClient, message: HeldMessage, startSeq: number): void {
    const { position, count, atMs } = message;
    const ackSeq = this.acked.get(position);
    if (ackSeq !== undefined && ackSeq < startSeq) {
      fail(
        'I1',
        `${position} was acknowledged (seq ${ackSeq}) before the receive of consumer ${client.index} started (seq ${startSeq})`,
      );
    }
    const earlier = this.deliveries.get(position) ?? [];
    const last = earlier.at(-1);
    if (last && count <= last.count) {
      fail(
        'I4',
        `${position} delivered with count ${count} after an earlier delivery with count ${last.count}`,
      );
    }
    if (this.exact && count !== earlier.length) {
      fail('I4', `${position} delivered with count ${count} after ${earlier.length} earlier deliveries`);
    }
    if (count >= 2) this.redeliveredTwice++;
    const { deadLetter } = this.policy;
    if (this.shared && deadLetter !== undefined && count > deadLetter) {
      fail('DL', `${position} delivered with count ${count}, past maxRedeliverCount ${deadLetter}`);
    }
    if (this.shared) {
      this.checkOneHolder(client, message);
      if (last) this.checkRedeliveryTime(message, last, startSeq);
    }
    earlier.push({ consumer: client.index, count, atMs, seq: message.seq });
    this.deliveries.set(position, earlier);
  }

  /** Shared, Key_Shared: no other consumer holds the entry, unless something gave it back since. */
  private checkOneHolder(client: PathClient, message: HeldMessage): void {
    for (const other of this.clients) {
      if (other === client || other.state !== 'open') continue;
      const held = other.held.find((h) => h.position === message.position);
      if (!held || other.releasedSinceSeq > held.seq) continue;
      const timeoutMs = this.policy.ackTimeoutDelayMs(held.count);
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
    const timeoutMs = this.policy.ackTimeoutDelayMs(last.count);
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
