import { latestDelay, type RedeliveryBackoff } from './redelivery-backoff.ts';

/** One coming redelivery: the count it carries and the window it is due in (epoch ms). */
export interface PreviewStep {
  readonly redeliveryCount: number;
  readonly earliestMs: number;
  readonly latestMs: number;
}

/** How one consumer policy brings a message back, reduced to what a preview needs. */
export interface PreviewPolicy {
  /** The delay after a nack for a count (its backoff, or the fixed delay); jitter excluded. */
  readonly nackBackoff: RedeliveryBackoff;
  /** The ack timeout's delay for a count; undefined: no ack timeout. */
  readonly ackTimeoutBackoff?: RedeliveryBackoff;
  /** Past this redeliveryCount the message goes to the dead-letter topic; none: never. */
  readonly maxRedeliverCount?: number;
}

export interface RedeliveryPreview {
  /** Each delivery is nacked at once: when the next `count` come, earliest and latest (jitter). */
  readonly nack: PreviewStep[];
  /** Each delivery is left unacknowledged: when its ack timeout brings it back; none without one. */
  readonly ackTimeout: PreviewStep[];
  /** The redeliveryCount at which it is dead-lettered instead of delivered (none: never). */
  readonly deadLetteredAtCount?: number;
}

/** Where a preview starts: the redelivery already due, as the subscription's state says. */
export interface PreviewInput {
  /** The redeliveryCount of the delivery whose outcome the steps follow (the next carries one more). */
  readonly fromCount: number;
  /** When that delivery is handed out (or nacked / timed out: now for a held one). */
  readonly fromMs: number;
  readonly count: number;
  /**
   * The delivery carrying `fromCount + 1` is already due at this time, per list (a nack's backoff
   * or a reschedule: released, due at its time; a held one's ack timeout or lease: when it comes
   * back). That step is listed at it (its jitter is spent) and the next ones add to it.
   */
  readonly dueMs?: { readonly nack?: number; readonly ackTimeout?: number };
}

/**
 * The next `count` redeliveries of a message, from `input` (see PreviewInput): under nacks (each
 * delivery nacked at once) and under ack timeouts (each left unacknowledged), separately. Earliest
 * and latest differ by the backoff's jitter; each step adds to the previous one's window. Steps
 * stop where the dead-letter topic takes the message. Pure.
 */
export function previewRedeliveries(policy: PreviewPolicy, input: PreviewInput): RedeliveryPreview {
  const last = policy.maxRedeliverCount === undefined ? Infinity : policy.maxRedeliverCount;
  const steps = (backoff: RedeliveryBackoff | undefined, dueMs: number | undefined): PreviewStep[] => {
    if (!backoff) return [];
    const result: PreviewStep[] = [];
    let earliest = input.fromMs;
    let latest = input.fromMs;
    for (let i = 0; i < input.count; i++) {
      // The delivery with count c - 1 is nacked (or times out): the next carries c.
      const count = input.fromCount + i + 1;
      if (count > last) break;
      if (i === 0 && dueMs !== undefined) {
        earliest = dueMs;
        latest = dueMs;
      } else {
        earliest += backoff.next(count - 1);
        latest += latestDelay(backoff, count - 1);
      }
      result.push({ redeliveryCount: count, earliestMs: earliest, latestMs: latest });
    }
    return result;
  };
  return {
    nack: steps(policy.nackBackoff, input.dueMs?.nack),
    ackTimeout: steps(policy.ackTimeoutBackoff, input.dueMs?.ackTimeout),
    ...(policy.maxRedeliverCount !== undefined ? { deadLetteredAtCount: policy.maxRedeliverCount + 1 } : {}),
  };
}
