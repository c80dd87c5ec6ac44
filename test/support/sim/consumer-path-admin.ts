import { enforcePolicies } from '../../../shared/application/maintenance/enforce-policies.ts';
import { maintainSubscriptions } from '../../../shared/application/maintenance/maintain-subscriptions.ts';
import type { CursorOperationOutcome } from '../../../shared/application/subscriptions/cursor-operation.ts';
import { expireMessages } from '../../../shared/application/subscriptions/expire-messages.ts';
import { deleteSubscription } from '../../../shared/application/subscriptions/manage-subscriptions.ts';
import {
  resetCursorToEdge,
  resetCursorToMessageId,
  resetCursorToTimestamp,
} from '../../../shared/application/subscriptions/reset-subscription.ts';
import { skipByMessageIds, skipMessages } from '../../../shared/application/subscriptions/skip-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { deleteTopic } from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { AcklineError } from '../../../shared/domain/errors.ts';
import { Position } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { ManualClock } from '../manual-clock.ts';
import type { DeadLetterCopies } from './consumer-path-checks.ts';
import type { PathOracle, PathReset } from './consumer-path-oracle.ts';
import type { PathActionOf, PathScript } from './consumer-path-script.ts';
import type { ActiveCall, SimStores } from './sim-containers.ts';
import type { SimCounters } from './sim-counters.ts';
import { comparePositionText, fail } from './sim-oracle.ts';
import type { Mutation } from './sim-script.ts';

/**
 * The consumer path's admin side (issue 21, criterion 2): the cursor operations of
 * shared/application/subscriptions/ (reset-cursor by timestamp, MessageId, earliest and latest;
 * skip of the first messages and by ids; expireMessages), maintenance with the namespace's message
 * TTL and retention (enforcePolicies, as the maintenance function runs it after
 * maintainSubscriptions), and the subscription's or the topic's deletion; with what each tells the
 * oracle (what a reset makes unacknowledged may come again, as a first delivery; what a skip, an
 * expiry, the TTL or a reset forward acknowledges is acknowledged) and the checks of retention
 * (nothing unacknowledged deleted, nothing deleted younger than the retention time) and deletion (no
 * delivery after the delete answered).
 */

export const ADMIN: Principal = { role: 'admin', superuser: true };
const RESET_COUNTERS = {
  timestamp: 'resetsToTimestamp',
  messageId: 'resetsToMessageId',
  earliest: 'resetsToEarliest',
  latest: 'resetsToLatest',
} as const;
const SUBSCRIPTION = 'sub';

/** What the admin side reads and records into. */
export interface AdminWorld {
  readonly script: PathScript;
  readonly topic: TopicName;
  readonly oracle: PathOracle;
  readonly stores: SimStores;
  readonly clock: ManualClock;
  readonly counters: SimCounters;
  readonly deadLetters: DeadLetterCopies;
  readonly partitionOf: ReadonlyMap<string, number>;
  /** The consumers' clients (by index; a join appends one once it answered). */
  readonly clients: readonly unknown[];
  /** A deliberately broken use case, if any (noTtlEnforcement, noDeletion). */
  readonly mutation?: Mutation;
}

interface AdminCall {
  readonly ports: UseCasePorts;
  readonly call: ActiveCall;
  readonly startSeq: number;
}

/** An admin call of this round that may have acknowledged what the oracle cannot name: settled at the round's end. */
interface Loose {
  /** Its reset, if it was one. */
  readonly reset?: PathReset;
  answered: boolean;
  /** Once answered: the positions (by partition) below which it acknowledged; undefined: any published. */
  below?: ReadonlyMap<number, string>;
  /** An expiry: what was published before this true time may have expired. */
  expiredBeforeMs?: number;
}

export class PathAdmin {
  /** position (`L:E`) -> the true time its publish answered (its publish time is at most the skew later). */
  readonly publishedAtMs = new Map<string, number>();
  /** Positions some call may have acknowledged without the oracle knowing it for sure. */
  readonly maybeAcked = new Set<string>();
  /** The deletion of the last round: started, and the seq at which it answered. */
  deletion?: {
    readonly what: 'subscription' | 'topic';
    /** Clients that had subscribed when it started (a join alongside may make the subscription again). */
    readonly clientsBefore: number;
    answeredSeq?: number;
  };
  private loose: Loose[] = [];
  /** Resets that died or failed and that the engine may not have finished yet (see roundEnd). */
  private unfinished: PathReset[] = [];

  constructor(private readonly world: AdminWorld) {}

  /** A publish answered at true time `atMs`. */
  published(position: string, atMs: number): void {
    this.publishedAtMs.set(position, atMs);
  }

  /** Whether `position` may have been acknowledged (by anything but a delivery's acknowledgement the oracle recorded). */
  mayBeAcked(position: string): boolean {
    return this.maybeAcked.has(position) || this.world.oracle.everAcked.has(position);
  }

  async perform(
    action: PathActionOf<'reset' | 'skip' | 'expire' | 'maintenance' | 'delete'>,
    call: AdminCall,
  ): Promise<void> {
    switch (action.kind) {
      case 'reset':
        return this.reset(action, call);
      case 'skip':
        return this.skip(action, call);
      case 'expire':
        return this.expire(action.seconds, call);
      case 'maintenance':
        return this.maintain(call);
      case 'delete':
        return this.delete(action.what, call);
    }
  }

  private request(startSeq: number) {
    return {
      topic: this.world.topic,
      subscriptionName: SUBSCRIPTION,
      dryRun: false,
      principal: ADMIN,
      requestId: `admin-${startSeq}`,
    };
  }

  /** The `pick`th position published so far, if any. */
  private pickPublished(pick: number): string | undefined {
    const positions = [...this.publishedAtMs.keys()];
    return positions[pick % Math.max(1, positions.length)];
  }

  private async reset(action: PathActionOf<'reset'>, { ports, startSeq }: AdminCall): Promise<void> {
    const { oracle, counters, partitionOf } = this.world;
    const picked = this.pickPublished(action.pick);
    if (action.to === 'messageId' && picked === undefined) return;
    const reset = oracle.startReset(startSeq);
    const loose: Loose = { reset, answered: false };
    this.loose.push(loose);
    const request = { ...this.request(startSeq) };
    let outcome: CursorOperationOutcome;
    if (action.to === 'timestamp') {
      // A publish time around one of the messages' (or the start, with none published).
      const timestampMs = (picked ? (this.publishedAtMs.get(picked) ?? 0) : 0) + (action.pick % 3) * 100;
      outcome = await resetCursorToTimestamp(ports, { ...request, timestampMs });
    } else if (action.to === 'messageId') {
      const position = Position.parseStored(picked as string);
      const partitionIndex = partitionOf.get(picked as string) ?? -1;
      outcome = await resetCursorToMessageId(ports, {
        ...request,
        position,
        partitionIndex,
        isExcluded: false,
      });
    } else {
      outcome = await resetCursorToEdge(ports, { ...request, edge: action.to });
    }
    const seq = oracle.next();
    const scope = new Map<number, string>();
    for (const move of outcome.subscriptions[SUBSCRIPTION] ?? []) {
      scope.set(TopicName.parse(move.partition).partitionIndex, move.newReadPosition);
    }
    oracle.finishReset(reset, seq, scope);
    loose.answered = true;
    loose.below = scope;
    // Everything before the new read position is acknowledged by the new mark-delete.
    this.acknowledgeBelow(scope, seq, startSeq);
    counters[RESET_COUNTERS[action.to]]++;
  }

  /** Records as acknowledged (at `seq`) every position published so far before `below`'s position of its partition. */
  private acknowledgeBelow(below: ReadonlyMap<number, string>, seq: number, startSeq: number): void {
    for (const position of this.publishedAtMs.keys()) {
      const from = below.get(this.world.partitionOf.get(position) ?? -2);
      if (from !== undefined && comparePositionText(position, from) < 0) {
        this.world.oracle.acknowledged(position, seq, startSeq);
      }
    }
  }

  private async skip(action: PathActionOf<'skip'>, { ports, startSeq }: AdminCall): Promise<void> {
    const picked = this.pickPublished(action.pick);
    if (!picked) return;
    const { partitions } = this.world.script;
    const index = this.world.partitionOf.get(picked) ?? -1;
    if (action.byIds) {
      this.maybeAcked.add(picked);
      await skipByMessageIds(ports, ADMIN, this.world.topic, {
        subscriptionName: SUBSCRIPTION,
        positions: [Position.parseStored(picked)],
      });
      this.world.oracle.acknowledged(picked, this.world.oracle.next(), startSeq);
    } else {
      // Which of the backlog's first messages it skips, the oracle cannot tell: any of the partition's.
      const loose: Loose = { answered: false, below: new Map([[index, '9999999999:0']]) };
      this.loose.push(loose);
      const topic = partitions > 0 ? this.world.topic.partition(index) : this.world.topic;
      await skipMessages(ports, ADMIN, topic, {
        subscriptionName: SUBSCRIPTION,
        numMessages: 1 + (action.pick % 3),
      });
      loose.answered = true;
    }
    this.world.counters.adminSkips++;
  }

  private async expire(seconds: number, { ports, call, startSeq }: AdminCall): Promise<void> {
    const startMs = call.trueNowMs();
    const loose: Loose = { answered: false };
    this.loose.push(loose);
    await expireMessages(ports, { ...this.request(startSeq), expireTimeInSeconds: seconds });
    loose.answered = true;
    if (seconds > 0) this.expired(startMs - seconds * 1_000, startSeq, loose);
    this.world.counters.adminExpiries++;
  }

  /**
   * An expiry of what was published before `cutoffMs` (true time, by an invocation whose clock is
   * ahead by up to the skew) answered: what was published before it less the skew (a publish time is
   * at most the skew ahead) is acknowledged; what was published up to the skew after it may be.
   */
  private expired(cutoffMs: number, startSeq: number, loose: Loose): number {
    const { skewMs } = this.world.script;
    const seq = this.world.oracle.next();
    let expired = 0;
    for (const [position, atMs] of this.publishedAtMs) {
      if (atMs + skewMs >= cutoffMs) continue;
      this.world.oracle.acknowledged(position, seq, startSeq);
      expired++;
    }
    loose.expiredBeforeMs = cutoffMs + skewMs + 1;
    return expired;
  }

  /** Maintenance as the maintenance function runs it: the subscriptions, then the policies (message TTL, retention). */
  private async maintain({ ports, call, startSeq }: AdminCall): Promise<void> {
    const startMs = call.trueNowMs();
    const { ttlSeconds, retention } = this.world.script;
    const loose: Loose = { answered: false };
    if (ttlSeconds !== undefined) this.loose.push(loose);
    this.world.oracle.releaseAll(startSeq);
    const summary = await maintainSubscriptions(ports, { deadlineMs: ports.clock.nowMs() + 60_000 });
    if (ttlSeconds === undefined && retention === undefined) return;
    if (this.world.mutation === 'noTtlEnforcement') {
      loose.answered = true;
      if (ttlSeconds !== undefined) this.expired(startMs - ttlSeconds * 1_000, startSeq, loose);
      return;
    }
    let failures = 0;
    const policies = await enforcePolicies(ports, {
      deadlineMs: ports.clock.nowMs() + 60_000,
      activePartitions: summary.activePartitions,
      onFailure: () => {
        failures++;
      },
    });
    loose.answered = true;
    if (ttlSeconds !== undefined) {
      loose.expiredBeforeMs = startMs - ttlSeconds * 1_000 + this.world.script.skewMs + 1;
      if (failures === 0)
        this.world.counters.ttlExpired += this.expired(startMs - ttlSeconds * 1_000, startSeq, loose);
    }
    this.world.counters.retentionTrimmed += policies.trimmedEntries;
  }

  private async delete(what: 'subscription' | 'topic', { ports }: AdminCall): Promise<void> {
    this.deletion = { what, clientsBefore: this.world.clients.length };
    if (this.world.mutation === 'noDeletion') {
      // Answers without deleting anything.
    } else if (what === 'subscription') {
      await deleteSubscription(ports, ADMIN, this.world.topic, { name: SUBSCRIPTION, force: true });
    } else {
      await deleteTopic(ports, ADMIN, this.world.topic, { force: true });
    }
    this.deletion.answeredSeq = this.world.oracle.next();
  }

  /**
   * The round is over: a reset that did not answer is over once the engine finished it
   * (settleUnfinishedResets; covering everything until then); what the
   * round's admin calls may have acknowledged without the oracle knowing which is noted; what
   * retention deleted is checked.
   */
  async roundEnd(): Promise<void> {
    for (const loose of this.loose) {
      if (loose.reset && loose.reset.doneSeq === undefined) this.unfinished.push(loose.reset);
      for (const [position, atMs] of this.publishedAtMs) {
        if (!loose.answered || (loose.expiredBeforeMs !== undefined && atMs < loose.expiredBeforeMs)) {
          this.maybeAcked.add(position);
          continue;
        }
        const from = loose.below?.get(this.world.partitionOf.get(position) ?? -2);
        if (from !== undefined && comparePositionText(position, from) < 0) this.maybeAcked.add(position);
      }
    }
    this.loose = [];
    await this.settleUnfinishedResets();
    if (this.world.script.retention) await this.checkRetention();
  }

  /**
   * A reset that died or failed is over once no partition's head says a reset is under way, not
   * when its round ends: one that died after its first write (the head's `resetting`, the new read
   * position) is finished by the next dispatch, fold or reset that finds it RESET_TIMEOUT_MS later
   * (reset-cursor.ts), and that clears the acknowledgements landed on its pages meanwhile, as the
   * engine documents (an acknowledgement between its steps 1 and 2 may be cleared: the entry comes
   * again as a first delivery). Until then it covers everything: what is acknowledged meanwhile may
   * come again (`--seed 2`, Key_Shared, path 123: a reset that failed after its first write, an
   * acknowledgement by id of its partition's first entry a round later, handed out again with
   * count 0 once a claim finished the reset). The engine simulation judges a dead reset the same way.
   */
  private async settleUnfinishedResets(): Promise<void> {
    if (this.unfinished.length === 0 || (await this.anyPartitionResetting())) return;
    const { oracle } = this.world;
    for (const reset of this.unfinished) oracle.finishReset(reset, oracle.next());
    this.unfinished = [];
  }

  /** Whether the head of the subscription's cursor on any partition says a reset is under way (strong reads). */
  private async anyPartitionResetting(): Promise<boolean> {
    const { script, stores, topic } = this.world;
    const partitions =
      script.partitions === 0
        ? [topic]
        : Array.from({ length: script.partitions }, (_, i) => topic.partition(i));
    for (const partition of partitions) {
      const subscription = await stores.catalog.getSubscription(partition, SUBSCRIPTION);
      if (!subscription) continue;
      const record = await stores.dispatch.readHead(subscription.cursorId);
      if (record?.head.resetting) return true;
    }
    return false;
  }

  /**
   * Retention deleted nothing unacknowledged (the slowest subscription's mark-delete bounds it) and
   * nothing published within the retention time (consumed messages are kept that long).
   */
  async checkRetention(): Promise<void> {
    const { script, stores, topic, clock, partitionOf, deadLetters } = this.world;
    // With the subscription deleted (or its deletion under way), nothing bounds what retention lets go.
    if (this.deletion) return;
    const partitions =
      script.partitions === 0
        ? [topic]
        : Array.from({ length: script.partitions }, (_, i) => topic.partition(i));
    for (const partition of partitions) {
      const firstKept = (await stores.ledger.state(partition))?.firstKept?.toString();
      if (!firstKept) continue;
      for (const [position, atMs] of this.publishedAtMs) {
        const index = partitionOf.get(position);
        if (index !== partition.partitionIndex || comparePositionText(position, firstKept) >= 0) continue;
        const deadLettered = deadLetters.has(`${position}:${index}`);
        if (!deadLettered && !this.mayBeAcked(position)) {
          fail(
            'retention',
            `${position}:${index} deleted by retention (first kept ${firstKept}) while unacknowledged`,
          );
        }
        const keepMs = (script.retention?.retentionTimeInMinutes ?? 0) * 60_000;
        if (keepMs > 0 && atMs + script.skewMs > clock.nowMs() - keepMs) {
          fail(
            'retention',
            `${position}:${index}, published at ${atMs}, deleted by retention at ${clock.nowMs()}, within its retention time of ${keepMs} ms`,
          );
        }
      }
    }
  }

  /**
   * After a deletion answered: the consumers (still connected as their clients see it) receive while
   * time passes and the deletion jobs run; none gets anything from the deleted subscription.
   */
  async checkDeleted(phase: {
    readonly clients: readonly { readonly id?: string; readonly index: number }[];
    receive(id: string): Promise<readonly { readonly messageId: string }[]>;
    runJobs(): Promise<void>;
    maintain(): Promise<unknown>;
  }): Promise<void> {
    const deletion = this.deletion;
    if (deletion?.answeredSeq === undefined) return;
    for (let step = 0; step < 4; step++) {
      for (const client of phase.clients.slice(0, deletion.clientsBefore)) {
        if (!client.id) continue;
        const got = await phase.receive(client.id).catch((error: unknown) => {
          if (error instanceof AcklineError) return [];
          throw error;
        });
        if (got.length > 0) {
          fail(
            'deleted',
            `consumer ${client.index} received ${got.map((m) => m.messageId).join(' ')} after the ${deletion.what}'s deletion answered`,
          );
        }
      }
      this.world.clock.advance(5_000);
      await phase.runJobs();
      await phase.maintain();
    }
    if (deletion.what === 'subscription') this.world.counters.subscriptionDeletes++;
    else this.world.counters.topicDeletes++;
  }
}
