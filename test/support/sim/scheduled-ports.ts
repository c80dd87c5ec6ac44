import type { Scheduler } from 'fast-check';

/**
 * How one invocation (one Lambda call, one maintenance run) dies, if it does: at its port call
 * number `atCall` (0-based), before that call applies, or after it applied but before its answer
 * came back. A dead invocation's calls never settle: no error reaches a `catch`.
 */
export interface CrashPlan {
  readonly atCall: number;
  readonly applied: boolean;
}

/**
 * What may go wrong with one port call besides a crash (issue 21, criterion 2), as an AWS SDK
 * client meets it:
 * - `later`: the request is applied, and a copy of it (a retry of a connection that looked lost)
 *   is applied again later, at a scheduling point of its own, with other calls in between; the
 *   caller gets the first answer;
 * - `timeout`: the request is applied, its answer is lost, and the SDK retries it: applied again
 *   at once, the caller gets the second answer (a conditional write then reports a conflict with
 *   itself);
 * - `throttled`: the request is refused unapplied (ThrottlingException, a 5xx) `attempts` times;
 *   the SDK retries up to SDK_MAX_ATTEMPTS in all (each attempt a scheduling point), and past the
 *   last one the caller gets SimRejectedError.
 */
export type CallFault =
  | { readonly kind: 'later' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'throttled'; readonly attempts: number };

/** More port calls than this in one invocation is a runaway loop (the engine's longest make about 60; a 20 s Key_Shared long poll on 3 partitions made 3,000). */
export const MAX_CALLS_PER_INVOCATION = 50_000;

/** The SDK's attempts per request (the API functions' bounded retries: 3). */
export const SDK_MAX_ATTEMPTS = 3;

/** A store call refused through every SDK retry (throttling, a 5xx): nothing of it applied. */
export class SimRejectedError extends Error {
  constructor(label: string) {
    super(`${label}: throttled through ${SDK_MAX_ATTEMPTS} attempts`);
    this.name = 'SimRejectedError';
  }
}

/** One invocation's view of the ports: its calls are counted, scheduled, and may crash or repeat. */
export class Invocation {
  calls = 0;
  dead = false;
  /** Whether a call of this invocation applied and then died (its answer was lost). */
  diedAfterApplying = false;
  /** Whether it made more than MAX_CALLS_PER_INVOCATION calls (then it died there). */
  runaway = false;
  /** Whether a call of it was applied twice (`later` or `timeout`). */
  duplicated = false;
  /** Its calls applied twice, its attempts refused, and its calls refused through every retry. */
  readonly faultsMet = { appliedTwice: 0, refusedAttempts: 0, rejected: 0 };
  /**
   * Whether a compare-and-set of the head or a page may time out and be retried by the SDK (applied,
   * then refused for its own version; the store answers success for it, see the write token of
   * DynamoDbDispatchStore): on unless ACKLINE_SIM_CAS_TIMEOUTS=0.
   */
  timeoutsOnConditionalWrites = process.env.ACKLINE_SIM_CAS_TIMEOUTS !== '0';
  /** Settles when the invocation dies at its crash point (never otherwise). */
  readonly died: Promise<void>;
  private markDied: () => void = () => undefined;

  constructor(
    readonly id: string,
    readonly crash?: CrashPlan,
    /** This call number is applied twice, later (an SDK retry after a lost answer). */
    readonly duplicateCall?: number,
    /** Faults by call number (besides `duplicateCall` and the crash). */
    readonly faults: ReadonlyMap<number, CallFault> = new Map(),
  ) {
    this.died = new Promise((resolve) => {
      this.markDied = resolve;
    });
  }

  /** The fault of call `index`, if any. */
  faultAt(index: number): CallFault | undefined {
    if (this.duplicateCall === index) return { kind: 'later' };
    return this.faults.get(index);
  }

  die(applied: boolean): void {
    this.dead = true;
    if (applied) this.diedAfterApplying = true;
    this.markDied();
  }
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** A compare-and-set of the head or a page. */
function conditional(label: string): boolean {
  return /\.cas(Head|Page)$/.test(label);
}

/** `fault` unless it is a retry after a timeout (see Invocation.timeoutsOnConditionalWrites). */
function laterOnly(fault: CallFault | undefined): CallFault | undefined {
  return fault?.kind === 'timeout' ? undefined : fault;
}

/**
 * One port call of `invocation` as a request with scheduling points: before it applies and after
 * it applied, before its answer (and one per SDK retry). The fast-check scheduler decides the
 * order of every point of every invocation, so concurrent invocations interleave at each request,
 * and a crash can leave a call not applied or applied with its answer lost; its fault may refuse
 * it (throttling, retried) or apply it twice (at once, or later).
 */
export async function scheduledCall<R>(
  scheduler: Scheduler,
  invocation: Invocation,
  label: string,
  apply: () => Promise<R>,
): Promise<R> {
  const index = invocation.calls++;
  const named = `${invocation.id} ${label}#${index}`;
  if (index >= MAX_CALLS_PER_INVOCATION) {
    // A runaway loop (a receive spinning without its clock moving): it dies here, and the driver
    // reports it as a liveness violation.
    invocation.runaway = true;
    invocation.die(false);
    return never();
  }
  await scheduler.schedule(Promise.resolve(), `${named} before`);
  if (invocation.dead) return never();
  if (invocation.crash?.atCall === index && !invocation.crash.applied) {
    invocation.die(false);
    return never();
  }
  const fault =
    conditional(label) && !invocation.timeoutsOnConditionalWrites
      ? laterOnly(invocation.faultAt(index))
      : invocation.faultAt(index);
  if (fault?.kind === 'throttled') {
    for (let attempt = 1; attempt <= Math.min(fault.attempts, SDK_MAX_ATTEMPTS); attempt++) {
      invocation.faultsMet.refusedAttempts++;
      if (attempt === SDK_MAX_ATTEMPTS) {
        invocation.faultsMet.rejected++;
        throw new SimRejectedError(named);
      }
      await scheduler.schedule(Promise.resolve(), `${named} retry ${attempt}`);
      if (invocation.dead) return never();
    }
  }
  let result = await apply();
  if (fault?.kind === 'timeout') {
    invocation.duplicated = true;
    invocation.faultsMet.appliedTwice++;
    await scheduler.schedule(Promise.resolve(), `${named} retried after a timeout`);
    if (invocation.dead) return never();
    result = await apply().catch(() => result);
  }
  if (fault?.kind === 'later') {
    invocation.duplicated = true;
    invocation.faultsMet.appliedTwice++;
    // The copy lands at a point of its own: other calls, of this and other invocations, between.
    void scheduler
      .schedule(Promise.resolve(), `${named} applied again`)
      .then(() => apply())
      .catch(() => undefined);
  }
  if (invocation.crash?.atCall === index) {
    invocation.die(true);
    return never();
  }
  await scheduler.schedule(Promise.resolve(), `${named} after`);
  return result;
}

/**
 * Wraps a port so that every method call is one scheduledCall of `invocation`.
 */
export function scheduledPort<T extends object>(
  target: T,
  name: string,
  scheduler: Scheduler,
  invocation: Invocation,
): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        scheduledCall(scheduler, invocation, `${name}.${String(property)}`, () =>
          Promise.resolve((value as (...a: unknown[]) => unknown).apply(object, args)),
        );
    },
  });
}
