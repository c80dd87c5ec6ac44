import { rescheduleMessage } from '../../../shared/application/subscriptions/reschedule-message.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../../../shared/domain/errors.ts';
import type { TopicName } from '../../../shared/domain/topic-name.ts';
import type { AuditLog } from '../../../shared/ports/audit-log.ts';
import type { HeldMessage } from './consumer-path-oracle.ts';
import type { SimCounters } from './sim-counters.ts';
import { fail } from './sim-oracle.ts';

/**
 * An operator's reschedule in the consumer-path simulation (issue 24, criterion 7): it moves a
 * published message's due time on the subscription (a released run, or, not reached by the
 * dispatcher, an override in the head), or is refused (held, acknowledged, earlier than its due
 * time without `earlier`, Exclusive/Failover not reached). The check: never early. A successful
 * reschedule means no consumer held the entry at its write (a claim before it makes it refused, a
 * claim racing it makes its compare-and-set fail and its retry refused), so the first delivery that
 * returns after the reschedule started comes at the new due time or later, less the invocations'
 * clock skew. Counts stay exact and nothing is lost: the oracle's count check and the drain's
 * checks run over rescheduled entries as over the others.
 */

/** What the simulation reads of one reschedule: where it aims and when it runs (true times). */
export interface RescheduleCall {
  readonly ports: UseCasePorts;
  readonly principal: Principal;
  readonly topic: TopicName;
  readonly subscription: string;
  readonly messageId: string;
  readonly delayMs: number;
  readonly earlier: boolean;
  /** The oracle's seq when the call started, and the true time then. */
  readonly startSeq: number;
  readonly trueStartMs: number;
}

export class RescheduleOracle {
  /** position -> the earliest true time its next delivery may come, and the reschedule's start seq. */
  private readonly moved = new Map<string, { readonly dueAtMs: number; readonly seq: number }>();

  constructor(
    private readonly skewMs: number,
    private readonly counters: SimCounters,
    /** Whether a reset of the position may have applied after `seq` (it hands the entry out again, due at once). */
    private readonly resetSince: (position: string, seq: number) => boolean = () => false,
  ) {}

  /** Runs one reschedule; a refusal (4xx) is an answer, not a failure. */
  async reschedule(call: RescheduleCall): Promise<void> {
    const position = call.messageId.split(':').slice(0, 2).join(':');
    try {
      await rescheduleMessage(withAuditInTurn(call.ports), {
        principal: call.principal,
        topic: call.topic,
        subscription: call.subscription,
        messageId: call.messageId,
        deliverAtMs: call.ports.clock.nowMs() + call.delayMs,
        earlier: call.earlier,
        dryRun: false,
        requestId: `sim-${call.startSeq}`,
      });
    } catch (error) {
      const refusal = [ConflictError, NotFoundError, PreconditionFailedError, ValidationError].some(
        (family) => error instanceof family,
      );
      if (!refusal) throw error;
      this.counters.reschedulesRefused++;
      return;
    }
    this.counters.reschedules++;
    // The due time was set from the invocation's clock (ahead of true time by 0 to skewMs) and is
    // judged on another's (as far ahead at most): in true time, never before this.
    this.moved.set(position, { dueAtMs: call.trueStartMs + call.delayMs - this.skewMs, seq: call.startSeq });
  }

  /** Checks a delivery against the last reschedule of its entry (the first delivery after it only). */
  delivered(message: HeldMessage): void {
    const moved = this.moved.get(message.position);
    if (!moved || message.seq <= moved.seq) return;
    this.moved.delete(message.position);
    if (this.resetSince(message.position, moved.seq)) return;
    this.counters.reschedulesChecked++;
    if (message.atMs < moved.dueAtMs) {
      fail(
        'I5',
        `${message.position} delivered at ${message.atMs}, before the due time an operator set (${moved.dueAtMs}, skew included)`,
      );
    }
  }
}

/**
 * The ports with an audit log that records in the same turn: the in-memory one waits a macrotask
 * (setImmediate) per call, which the fast-check scheduler cannot see, so a round would end before
 * the reschedule does. The simulation checks deliveries, not audit records (the integration tests
 * check those).
 */
function withAuditInTurn(ports: UseCasePorts): UseCasePorts {
  const audit: AuditLog = {
    record: async () => undefined,
    list: async () => [],
    purgeExpired: async () => 0,
  };
  return { ...ports, audit };
}
