import { ConflictError } from './errors.ts';

/**
 * Pulsar's producer access modes (PIP-68, `ProducerAccessMode`): Shared (the default: any number of
 * producers), Exclusive (one producer; a second fails), WaitForExclusive (waits until the exclusive
 * producer goes), ExclusiveWithFencing (takes the topic over; the producer it replaces is fenced).
 */
export const PRODUCER_ACCESS_MODES = [
  'Shared',
  'Exclusive',
  'WaitForExclusive',
  'ExclusiveWithFencing',
] as const;
export type ProducerAccessMode = (typeof PRODUCER_ACCESS_MODES)[number];

/**
 * How long an exclusive producer holds its partition without a publish or a heartbeat: a producer
 * whose process died frees the partition this long after its last call (Pulsar frees it when the
 * connection drops). The SDK renews it every third of it while idle.
 */
export const PRODUCER_LEASE_MS = 30_000;

/**
 * The exclusive producer of a partition, as the partition's ledger state keeps it (Pulsar keeps the
 * topic epoch in the managed ledger's properties too). Fixed size: one holder at a time.
 */
export interface ExclusiveProducer {
  /** Made by the server when the producer registered: unique, so a fenced producer never matches. */
  readonly producerId: string;
  readonly producerName: string;
  /** The topic epoch it took the partition at (Pulsar's topic epoch: +1 at every exclusive takeover). */
  readonly topicEpoch: number;
  /** Epoch ms after which, without a renewal, it no longer holds the partition. */
  readonly leaseUntilMs: number;
}

/**
 * What a publish carries when an exclusive producer makes it: checked with the id allocation. The
 * registration's id is made anew at every acquisition, so it fences as Pulsar's topic epoch does
 * (an older holder's id never matches again); the epoch itself is reported, not needed for the check.
 */
export interface ProducerAccessToken {
  readonly producerId: string;
}

/**
 * Pulsar's `ProducerFencedException`: an exclusive producer that another replaced (or a second
 * Exclusive producer, as Pulsar answers it). Nothing was written (409).
 */
export class ProducerFencedError extends ConflictError {}

/** Pulsar's `ProducerBusyException`: the partition has a live exclusive producer; nothing was written (409). */
export class ProducerBusyError extends ConflictError {}

/** Whether the exclusive producer still holds the partition at `nowMs` (its lease has not lapsed). */
export function holds(holder: ExclusiveProducer | undefined, nowMs: number): holder is ExclusiveProducer {
  return holder !== undefined && holder.leaseUntilMs >= nowMs;
}

/**
 * Whether a publish may append, given the partition's exclusive producer: one made by that producer
 * (its id and epoch) always, even past its lease while nobody took over; any other only while no
 * exclusive producer holds the partition. Pure; the stores check the same with their allocation.
 */
export function publishAllowed(
  holder: ExclusiveProducer | undefined,
  access: ProducerAccessToken | undefined,
  nowMs: number,
): boolean {
  if (access !== undefined) {
    return holder?.producerId === access.producerId;
  }
  return !holds(holder, nowMs);
}

/** The error a refused publish answers: the exclusive producer's own was fenced, another is busy. */
export function publishRefusal(
  partition: string,
  holder: ExclusiveProducer | undefined,
  access: ProducerAccessToken | undefined,
): ConflictError {
  if (access !== undefined) {
    // Stryker disable next-line ConditionalExpression,StringLiteral: message text only
    const who = holder ? `'${holder.producerName}'` : 'nobody';
    return new ProducerFencedError(
      // Stryker disable next-line StringLiteral: message text only
      `Exclusive producer registration ${access.producerId} was fenced on ${partition} (held by ${who}); nothing was written`,
    );
  }
  return new ProducerBusyError(
    // Stryker disable next-line StringLiteral,LogicalOperator,OptionalChaining: message text only
    `Topic ${partition} has an existing exclusive producer: '${holder?.producerName ?? ''}'; nothing was written`,
  );
}
