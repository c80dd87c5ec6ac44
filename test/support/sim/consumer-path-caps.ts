import { heldAgainstCap } from '../../../shared/application/engine/consumer-cap.ts';
import type { EngineContext } from '../../../shared/application/engine/engine-context.ts';
import { pendingSummary } from '../../../shared/application/engine/pending-summary.ts';
import type { TopicName } from '../../../shared/domain/topic-name.ts';
import type { PathClient } from './consumer-path-oracle.ts';
import type { SimStores } from './sim-containers.ts';
import type { SimCounters } from './sim-counters.ts';
import { fail } from './sim-oracle.ts';

/**
 * I7 on the consumer path (issue 21, criterion 3), Shared and Key_Shared: a consumer holds at most
 * its cap of unacknowledged entries on each partition (the cap is per partition, as each partition
 * of a Pulsar multi-topic consumer is a consumer of its own; those past their ack timeout do not
 * count), plus the overshoot
 * the design allows and only that (invariants.md, I7): a container trusts its count of a consumer's
 * entries for up to UNACKED_COUNT_AGE_MS plus what it handed out since, so what other containers
 * handed the same consumer within that age may pass it. Checked after every round in which the
 * consumer received, on strong reads of every partition: what it holds then is at most what it
 * held after its last claim (acknowledgements only lower it), and the allowance counts every
 * delivery of another container within the age, before or after that claim.
 */

/** How long a container trusts its count of a consumer's entries (10 s; consumer-cap.ts), plus the skew. */
export const UNACKED_COUNT_AGE_MS = 11_000;

/** One receive's deliveries to a consumer: in which container, at which true time. */
export interface HandedOut {
  readonly consumer: number;
  readonly container: string;
  readonly atMs: number;
  readonly count: number;
}

export class CapCheck {
  /** This round's and earlier receives' deliveries, the last UNACKED_COUNT_AGE_MS of them. */
  private handedOut: HandedOut[] = [];
  /** Consumers (client indexes) that received this round, with the containers they received in. */
  private readonly receivedThisRound = new Map<number, Set<string>>();

  constructor(
    private readonly world: {
      readonly stores: SimStores;
      readonly ctx: EngineContext;
      readonly partitions: readonly TopicName[];
      readonly cap: number;
      readonly counters: SimCounters;
    },
  ) {}

  /** A receive of `client` in `container` returned `count` messages at true time `atMs`. */
  received(client: PathClient, container: string, atMs: number, count: number): void {
    if (count === 0) return;
    this.handedOut.push({ consumer: client.index, container, atMs, count });
    const containers = this.receivedThisRound.get(client.index) ?? new Set<string>();
    containers.add(container);
    this.receivedThisRound.set(client.index, containers);
  }

  /** After a round: each consumer that received holds at most its cap plus the allowance. */
  async check(clients: readonly PathClient[], nowMs: number): Promise<void> {
    this.handedOut = this.handedOut.filter((h) => h.atMs >= nowMs - UNACKED_COUNT_AGE_MS);
    if (this.receivedThisRound.size === 0) return;
    const held = await this.heldByConsumer();
    for (const [index, containers] of this.receivedThisRound) {
      const id = clients[index]?.id;
      if (!id) continue;
      const holds = Math.max(0, ...(held.get(id) ?? []));
      // The most another container's deliveries may add, for the container of any of its claims.
      const allowance = Math.max(
        ...[...containers].map((container) =>
          this.handedOut
            .filter((h) => h.consumer === index && h.container !== container)
            .reduce((sum, h) => sum + h.count, 0),
        ),
      );
      if (holds > this.world.cap + allowance) {
        fail(
          'I7',
          `consumer ${index} holds ${holds} entries on a partition, past its cap of ${this.world.cap} and the ${allowance} other containers handed it within ${UNACKED_COUNT_AGE_MS} ms`,
        );
      }
      this.world.counters.capChecks++;
    }
    this.receivedThisRound.clear();
  }

  /** Every consumer's entries held against its cap, on each partition (strong reads). */
  private async heldByConsumer(): Promise<Map<string, number[]>> {
    const held = new Map<string, number[]>();
    for (const partition of this.world.partitions) {
      const subscription = await this.world.stores.catalog.getSubscription(partition, 'sub');
      if (!subscription) continue;
      const summary = await pendingSummary(this.world.ctx, {
        partition,
        cursorId: subscription.cursorId,
        type: subscription.type,
      });
      for (const [id, n] of heldAgainstCap(summary)) held.set(id, [...(held.get(id) ?? []), n]);
    }
    return held;
  }
}
