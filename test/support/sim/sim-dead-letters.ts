import type { DeadLetterProducer } from '../../../shared/application/engine/engine-context.ts';
import { Position } from '../../../shared/domain/position.ts';
import type { Invocation } from './scheduled-ports.ts';

/**
 * The dead letters a simulation's consumers publish (every consumer shares one policy), checked as
 * they come: once per message, unless a step that published it died before its acknowledgement,
 * or a reset of the cursor to it or before it made it unacknowledged again since (the reset
 * replays it, and the policy applies to it again, as Pulsar's does).
 */
export class SimDeadLetters {
  /** Dead letters published since the last reset of their position, with the invocations that published each. */
  private readonly published = new Map<string, Invocation[]>();
  /** Every position ever dead-lettered, and how many dead letters in all. */
  private readonly ever = new Set<string>();
  private total = 0;

  constructor(
    private readonly maxRedeliverCount: number | undefined,
    private readonly fail: (invariant: string, detail: string) => never,
  ) {}

  /** The producer of one invocation (none without a policy). */
  producer(invocation: Invocation): DeadLetterProducer | undefined {
    if (this.maxRedeliverCount === undefined) return undefined;
    return {
      maxRedeliverCount: this.maxRedeliverCount,
      publish: async (entries) => {
        for (const entry of entries) {
          const key = entry.position.toString();
          const before = this.published.get(key) ?? [];
          const alive = before.find((other) => !other.dead);
          if (alive) this.fail('DL', `${key} dead-lettered by ${invocation.id} after ${alive.id} did`);
          this.published.set(key, [...before, invocation]);
          this.ever.add(key);
          this.total++;
        }
      },
    };
  }

  /** The positions `invocation` dead-lettered. */
  by(invocation: Invocation): Position[] {
    return [...this.published]
      .filter(([, by]) => by.includes(invocation))
      .map(([key]) => Position.parseStored(key));
  }

  has(key: string): boolean {
    return this.ever.has(key);
  }

  /** How many dead letters were published. */
  count(): number {
    return this.total;
  }

  /** A reset to `to` started or ended: what was dead-lettered from `to` on may be dead-lettered again. */
  replayFrom(to: Position): void {
    for (const key of [...this.published.keys()]) {
      if (to.compareTo(Position.parseStored(key)) <= 0) this.published.delete(key);
    }
  }
}
