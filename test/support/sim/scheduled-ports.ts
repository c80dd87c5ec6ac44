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

/** One invocation's view of the ports: its calls are counted, scheduled, and may crash or repeat. */
export class Invocation {
  calls = 0;
  dead = false;
  /** Whether a call of this invocation applied and then died (its answer was lost). */
  diedAfterApplying = false;
  /** Whether its `duplicateCall` was applied twice. */
  duplicated = false;

  constructor(
    readonly id: string,
    readonly crash?: CrashPlan,
    /** This call number is applied twice (an SDK retry after a lost answer). */
    readonly duplicateCall?: number,
  ) {}
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Wraps a port so that every method call is one request with two scheduling points: before it
 * applies and after it applied, before its answer. The fast-check scheduler decides the order of
 * every point of every invocation, so concurrent invocations interleave at each request, and a
 * crash can leave a call not applied, applied with its answer lost, or applied twice.
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
      return async (...args: unknown[]) => {
        const index = invocation.calls++;
        const label = `${invocation.id} ${name}.${String(property)}#${index}`;
        await scheduler.schedule(Promise.resolve(), `${label} before`);
        if (invocation.dead) return never();
        if (invocation.crash?.atCall === index && !invocation.crash.applied) {
          invocation.dead = true;
          return never();
        }
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
        if (invocation.duplicateCall === index) {
          invocation.duplicated = true;
          await Promise.resolve()
            .then(() => (value as (...a: unknown[]) => unknown).apply(object, args))
            .catch(() => undefined);
        }
        if (invocation.crash?.atCall === index) {
          invocation.dead = true;
          invocation.diedAfterApplying = true;
          return never();
        }
        await scheduler.schedule(Promise.resolve(), `${label} after`);
        return result;
      };
    },
  });
}
