import { processQueueRecords } from '../../../shared/application/consumers/process-queue-records.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type {
  AcklineBatchEvent,
  AcklineBatchResponse,
  AcklineFailure,
} from '../../../shared/lambda/consumer-batch.ts';
import { batchHandlerOf } from '../../../shared/lambda/consumer-runner.ts';
import { FunctionInvocationError, type FunctionInvoker } from '../../../shared/ports/function-invoker.ts';
import type { DeadLetterCopies } from './consumer-path-checks.ts';
import type { HeldMessage, PathClient, PathOracle } from './consumer-path-oracle.ts';
import type { PathActionOf } from './consumer-path-script.ts';
import type { ActiveCall, SimStores } from './sim-containers.ts';
import type { SimCounters } from './sim-counters.ts';
import { fail } from './sim-oracle.ts';
import type { Mutation } from './sim-script.ts';

/**
 * The Lambda consumer runner's path in the consumer-path simulation (issue 21 criterion 1, issue 24
 * criterion 7): a `runner` action runs processQueueRecords as shared/lambda/consumer-runner.ts
 * does (one doorbell record of the consumer's queue, batchHandlerOf over the user's function),
 * for an event-driven consumer (subscribed with `lambda`, durable). The function is a seeded stand-in
 * that answers, per message: success (acknowledged), a failure (the policy's nack backoff), a
 * RetryAfterError (`retryAfterMs`) or a non-retryable error (the dead-letter topic at once,
 * whatever the count); or it throws (the batch stays held until the function's timeout plus
 * LAMBDA_TIMEOUT_MARGIN_MS). Its deliveries go through the oracle like any consumer's; a
 * non-retryable failure the runner applied is dead-lettered before the step ends (the round's
 * dead-letter copy check bounds it to once, twice when a step died inside it) and never
 * delivered again.
 */

/** The function's timeout the runner's consumer is subscribed with. */
export const RUNNER_FUNCTION_TIMEOUT_MS = 3_000;
/** Its ack timeout: the function's timeout plus LAMBDA_TIMEOUT_MARGIN_MS (consumer-session.ts). */
export const RUNNER_ACK_TIMEOUT_MS = RUNNER_FUNCTION_TIMEOUT_MS + 5_000;
/** Batches one invocation hands over before the function starts failing (an invocation's time runs out). */
const BATCHES_PER_INVOCATION = 3;
/** RetryAfterError delays the function asks for. */
const RETRY_AFTER_MS = [1_500, 4_000] as const;

/** What the runner's step needs of the simulation. */
export interface RunnerWorld {
  readonly oracle: PathOracle;
  readonly counters: SimCounters;
  readonly stores: SimStores;
  readonly deadLetters: DeadLetterCopies;
  /** Positions an acknowledgement may have reached (an answer lost). */
  readonly maybeAcked: Set<string>;
  /** Whether an admin's call (a skip, an expiry, the TTL, a reset) or an ack that did not answer may have acknowledged it. */
  mayBeAcked(position: string): boolean;
  /** Whether the subscription's or the topic's deletion started (nothing is then expected of a nack). */
  deleting(): boolean;
  /** `L:E:P` -> `L:E`, noting its partition. */
  noteMessageId(messageId: string): string;
  readonly mutation?: Mutation | undefined;
  /** Whether the subscription has a dead-letter policy (non-retryable failures need one). */
  readonly deadLetterPolicy: boolean;
}

interface Choice {
  readonly held: HeldMessage;
  readonly failure?: AcklineFailure;
}

/** A seeded random source (a linear congruential generator). */
function seeded(seed: number): () => number {
  let state = seed % 2_147_483_647 || 1;
  return () => {
    state = (state * 48_271) % 2_147_483_647;
    return (state - 1) / 2_147_483_646;
  };
}

export class PathRunner {
  /** messageId -> the seq after which a non-retryable failure dead-lettered it (delivered again: a violation). */
  private readonly deadLettered = new Map<string, { position: string; seq: number }>();

  /** This round's non-retryable failures the runner's nack found held: checked dead-lettered at its end. */
  private expected: { client: PathClient; held: HeldMessage }[] = [];

  constructor(private readonly world: RunnerWorld) {
    const previous = world.oracle.afterDelivery;
    world.oracle.afterDelivery = (message) => {
      previous?.(message);
      this.delivered(message);
    };
  }

  /** One invocation of the runner for `client` (the event-driven consumer). */
  async run(
    action: PathActionOf<'runner'>,
    client: PathClient,
    { ports, call, startSeq }: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
  ): Promise<{ lost: boolean }> {
    const { counters } = this.world;
    counters.runnerInvocations++;
    const random = seeded(action.seed + 1);
    const chosen: Choice[] = [];
    let batches = 0;
    // A violation the oracle finds inside the function would become the batch's failure (batchHandlerOf
    // takes any throw for an invocation that failed): it is kept and thrown once the step is over.
    let violation: unknown;
    const target: FunctionInvoker = {
      invoke: async (payload) => {
        try {
          return this.handle(payload as AcklineBatchEvent, {
            client,
            call,
            startSeq,
            random,
            chosen,
            batch: ++batches,
          });
        } catch (error) {
          if (!(error instanceof FunctionInvocationError)) violation ??= error;
          throw error;
        }
      },
    };
    const cursorId = await this.cursorOf(client);
    const result = await processQueueRecords(ports, {
      consumerId: client.id as string,
      records: [{ recordId: `r${startSeq}`, cursorId, body: '{}' }],
      handleBatch: batchHandlerOf(target),
    });
    if (violation !== undefined) throw violation;
    this.settle(client, chosen, { atMs: call.trueNowMs(), startSeq, clean: result.error === undefined });
    return { lost: result.error !== undefined };
  }

  /** The function's stand-in: each message's delivery checked, then its seeded answer (or a throw). */
  private handle(
    { acklineBatch: { messages } }: AcklineBatchEvent,
    step: {
      client: PathClient;
      call: ActiveCall;
      startSeq: number;
      random: () => number;
      chosen: Choice[];
      batch: number;
    },
  ): AcklineBatchResponse {
    const { oracle } = this.world;
    const { client, call, startSeq, random, chosen, batch } = step;
    const seq = oracle.next();
    const held = messages.map((message) => {
      const h: HeldMessage = {
        position: this.world.noteMessageId(message.messageId),
        messageId: message.messageId,
        handle: '',
        count: message.redeliveryCount,
        key: message.key,
        atMs: call.trueNowMs(),
        seq,
      };
      oracle.delivered(client, h, startSeq);
      client.held.push(h);
      return h;
    });
    // The function timed out or crashed (or the invocation's time ran out): all stay held.
    if (batch > BATCHES_PER_INVOCATION || random() < 1 / 6) {
      throw new FunctionInvocationError('sim: the function timed out');
    }
    const failures: AcklineFailure[] = [];
    for (const h of held) {
      const choice = this.choose(h, random);
      chosen.push(choice);
      if (choice.failure) failures.push(this.answered(choice.failure));
      else this.world.maybeAcked.add(h.position);
      client.held = client.held.filter((other) => other !== h);
    }
    return { acklineFailures: failures };
  }

  /** What the seeded function answers for one message. */
  private choose(held: HeldMessage, random: () => number): Choice {
    const draw = random();
    const error = 'Error: sim';
    if (draw < 0.4) return { held };
    if (draw < 0.6) return { held, failure: { messageId: held.messageId, error } };
    if (draw < 0.8) {
      const retryAfterMs = RETRY_AFTER_MS[Math.floor(random() * RETRY_AFTER_MS.length)] as number;
      return { held, failure: { messageId: held.messageId, error, retryAfterMs } };
    }
    return { held, failure: { messageId: held.messageId, error, nonRetryable: true } };
  }

  /** What the function answers for a failure: broken on purpose (nonRetryableAsNack), the flag is lost and a normal nack follows. */
  private answered(failure: AcklineFailure): AcklineFailure {
    if (this.world.mutation !== 'nonRetryableAsNack' || !failure.nonRetryable) return failure;
    return { messageId: failure.messageId, error: failure.error };
  }

  /** After the step: acknowledgements and nacks recorded; non-retryable ones expected dead-lettered. */
  private settle(
    client: PathClient,
    chosen: readonly Choice[],
    step: { atMs: number; startSeq: number; clean: boolean },
  ): void {
    const { oracle, counters } = this.world;
    const endSeq = oracle.next();
    for (const { held, failure } of chosen) {
      if (!failure) {
        if (step.clean) oracle.acknowledged(held.position, endSeq);
        continue;
      }
      if (!step.clean) continue;
      const nonRetryable = failure.nonRetryable === true && this.world.deadLetterPolicy;
      const delayMs = failure.nonRetryable ? undefined : failure.retryAfterMs;
      const released = oracle.nack(client, held, {
        startSeq: step.startSeq,
        atMs: step.atMs,
        endSeq,
        delayMs,
      });
      if (failure.retryAfterMs !== undefined && released) counters.retryAfterNacks++;
      if (nonRetryable && released) {
        this.deadLettered.set(held.messageId, { position: held.position, seq: endSeq });
        this.expected.push({ client, held });
      }
    }
  }

  /**
   * After a round (and the admin's, which knows by then what a skip of the backlog's first messages
   * may have acknowledged): each non-retryable failure was dead-lettered.
   */
  roundEnd(): void {
    if (this.world.deleting()) this.expected = [];
    for (const { client, held } of this.expected) {
      if (!this.expectDeadLetter(client, held)) continue;
      if (!this.world.deadLetters.has(held.messageId)) {
        fail(
          'NR',
          `${held.messageId} failed non-retryable (count ${held.count}), not dead-lettered by the runner's step`,
        );
      }
      this.world.counters.nonRetryableDeadLetters++;
    }
    this.expected = [];
  }

  /**
   * Whether the runner's nack found the message still held by its consumer, so that it must have
   * dead-lettered it: not when a call that may give back what consumers hold ran alongside (the
   * scheduler, maintenance), nor when an admin's call or a reset may have acknowledged it.
   */
  private expectDeadLetter(client: PathClient, held: HeldMessage): boolean {
    const { oracle } = this.world;
    return (
      client.releasedSinceSeq <= held.seq &&
      !this.world.mayBeAcked(held.position) &&
      !oracle.resetOverlaps(held.position, held.seq) &&
      oracle.acked.get(held.position) === undefined
    );
  }

  /** A delivery of a message a non-retryable failure dead-lettered (unless a reset gave it back since). */
  private delivered(message: HeldMessage): void {
    const done = this.deadLettered.get(message.messageId);
    if (!done || message.seq <= done.seq) return;
    if (this.world.oracle.resetOverlaps(done.position, done.seq)) return;
    fail(
      'NR',
      `${message.messageId} delivered with count ${message.count} after a non-retryable failure dead-lettered it`,
    );
  }

  /** The cursor of the consumer's first partition (the queue a doorbell record comes from). */
  private async cursorOf(client: PathClient): Promise<string> {
    const record = await this.world.stores.consumers.get(client.id as string);
    return record?.partitions[0]?.cursorId ?? '?';
  }
}
