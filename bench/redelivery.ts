import { performance } from 'node:perf_hooks';
import { MultiplierRedeliveryBackoff } from '../shared/domain/redelivery-backoff.ts';
import { type BenchStack, type Distribution, distribution, Progress } from './harness.ts';

export interface RedeliverySeries {
  /** What the series configures, in Pulsar's terms. */
  readonly schedule: string;
  readonly redeliveries: number;
  /** Observed minus scheduled delay, in milliseconds. */
  readonly latenessMs: Distribution;
  /** Redeliveries that came before their scheduled delay had passed (must be 0). */
  readonly early: number;
}

export interface RedeliveryResult {
  readonly negativeAck: RedeliverySeries;
  readonly ackTimeout: RedeliverySeries;
}

interface Received {
  readonly messageId: string;
  readonly deliveryHandle: string;
  readonly redeliveryCount: number;
}

/** One series: its topic, what its consumer subscribes with, and when a redelivery is due. */
interface SeriesSetup {
  readonly topic: string;
  readonly subscribe: Record<string, unknown>;
  readonly schedule: string;
  /** The scheduled delay after a delivery with this count was nacked or received. */
  readonly dueAfterMs: (count: number) => number;
  readonly nacks: boolean;
}

const NACK_BACKOFF = { minDelayMs: 1000, maxDelayMs: 4000, multiplier: 2 };
const ACK_TIMEOUT_MS = 1000;
const ACK_TIMEOUT_BACKOFF = { minDelayMs: 1000, maxDelayMs: 2000, multiplier: 2 };

/**
 * Two series side by side, each `messages` messages redelivered `rounds`
 * times (at least 50 redeliveries each):
 * - negative acknowledgement with backoff B(1 s, 4 s, x2): every delivery
 *   with a count below `rounds` is nacked; due `next(count)` after the nack;
 * - ack timeout 1 s with backoff B(1 s, 2 s, x2) (PIP-130): deliveries are
 *   never acknowledged until the last round; due `ackTimeout + next(count)`
 *   after the delivery.
 * Lateness is measured on the client's clock, from the moment the nack call
 * (or the receive call that delivered the message) was sent to the moment the
 * receive bringing the redelivery returned, minus the scheduled delay. The
 * server's own moments lie between those, so the figure is an upper bound on
 * the true lateness, and a negative one proves an early redelivery.
 */
export async function runRedelivery(
  stack: BenchStack,
  options: { messages: number; rounds: number },
): Promise<RedeliveryResult> {
  const progress = new Progress('redelivery timing', 2 * options.messages * options.rounds);
  const [negativeAck, ackTimeout] = await Promise.all([
    series(stack, options, progress, {
      topic: 'bench-nack',
      subscribe: { negativeAckRedeliveryBackoff: NACK_BACKOFF },
      schedule: `negativeAckRedeliveryBackoff B(${NACK_BACKOFF.minDelayMs}, ${NACK_BACKOFF.maxDelayMs}, x${NACK_BACKOFF.multiplier})`,
      dueAfterMs: (count) => backoffOf(NACK_BACKOFF).next(count),
      nacks: true,
    }),
    series(stack, options, progress, {
      topic: 'bench-ack-timeout',
      subscribe: { ackTimeoutMs: ACK_TIMEOUT_MS, ackTimeoutRedeliveryBackoff: ACK_TIMEOUT_BACKOFF },
      schedule: `ackTimeout ${ACK_TIMEOUT_MS} ms + ackTimeoutRedeliveryBackoff B(${ACK_TIMEOUT_BACKOFF.minDelayMs}, ${ACK_TIMEOUT_BACKOFF.maxDelayMs}, x${ACK_TIMEOUT_BACKOFF.multiplier})`,
      dueAfterMs: (count) => ACK_TIMEOUT_MS + backoffOf(ACK_TIMEOUT_BACKOFF).next(count),
      nacks: false,
    }),
  ]);
  progress.finish();
  return { negativeAck, ackTimeout };
}

function backoffOf(config: typeof NACK_BACKOFF) {
  return MultiplierRedeliveryBackoff.builder()
    .minDelayMs(config.minDelayMs)
    .maxDelayMs(config.maxDelayMs)
    .multiplier(config.multiplier)
    .build();
}

async function series(
  stack: BenchStack,
  options: { messages: number; rounds: number },
  progress: Progress,
  setup: SeriesSetup,
): Promise<RedeliverySeries> {
  const path = `/persistent/public/default/${setup.topic}`;
  const { consumerId } = await stack.call<{ consumerId: string }>(
    'POST',
    `/consumers${path}/subscription/timing`,
    { subscriptionType: 'Shared', subscriptionInitialPosition: 'Latest', ...setup.subscribe },
  );
  await stack.call('POST', `/topics${path}`, {
    messages: Array.from({ length: options.messages }, (_, i) => ({ payload: `timing ${i}` })),
  });
  /** Per message: when its redelivery is due at the earliest (client clock), and for which count. */
  const due = new Map<string, { atMs: number; scheduledMs: number; count: number }>();
  const lateness: number[] = [];
  let early = 0;
  let finished = 0;
  const deadline = performance.now() + 120_000;
  while (finished < options.messages) {
    if (performance.now() > deadline) throw new Error(`${setup.schedule}: redeliveries missing after 120 s`);
    const receiveSentAt = performance.now();
    const { messages } = await stack.call<{ messages: Received[] }>(
      'POST',
      `/consumers/${consumerId}/receive?maxMessages=10&waitMs=100`,
    );
    const receivedAt = performance.now();
    const toNack: string[] = [];
    const toAck: string[] = [];
    for (const message of messages) {
      const expected = due.get(message.messageId);
      if (expected) {
        if (message.redeliveryCount !== expected.count + 1) {
          throw new Error(
            `${message.messageId}: redelivery count ${message.redeliveryCount}, expected ${expected.count + 1}`,
          );
        }
        const late = receivedAt - expected.atMs;
        lateness.push(late);
        if (late < 0) early++;
        progress.add();
      }
      if (message.redeliveryCount >= options.rounds) {
        toAck.push(message.deliveryHandle);
        due.delete(message.messageId);
        finished++;
        continue;
      }
      const scheduledMs = setup.dueAfterMs(message.redeliveryCount);
      if (setup.nacks) toNack.push(message.deliveryHandle);
      due.set(message.messageId, {
        atMs: receiveSentAt + scheduledMs,
        scheduledMs,
        count: message.redeliveryCount,
      });
    }
    if (toNack.length > 0) {
      const nackSentAt = performance.now();
      for (const message of messages) {
        const entry = due.get(message.messageId);
        if (entry && toNack.includes(message.deliveryHandle)) entry.atMs = nackSentAt + entry.scheduledMs;
      }
      await stack.call('POST', `/consumers/${consumerId}/nack`, { deliveryHandles: toNack });
    }
    if (toAck.length > 0)
      await stack.call('POST', `/consumers/${consumerId}/ack`, { deliveryHandles: toAck });
  }
  await stack.call('DELETE', `/consumers/${consumerId}`);
  return {
    schedule: setup.schedule,
    redeliveries: lateness.length,
    latenessMs: distribution(lateness),
    early,
  };
}
