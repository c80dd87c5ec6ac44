import { DEAD_LETTER_HOLDER } from '../../../shared/application/engine/dead-letter-claim.ts';
import { type DeliveryRun, runPositions } from '../../../shared/domain/delivery-run.ts';
import type { DispatchHead } from '../../../shared/domain/dispatch-head.ts';
import type { DispatchStore, PageRef, TrackerEntry } from '../../../shared/ports/dispatch-store.ts';
import type { InMemoryDispatchStore } from '../in-memory-dispatch-store.ts';
import type { Mutation } from './sim-script.ts';

/** The simulation's store wrappers: counting a receive's takes from pages, and the deliberate defects. */

/**
 * The store, counting in `receiving.fromPages` the entries a receive's page writes newly make its
 * consumer hold against its cap (held by it and not past their ack timeout) among those the page
 * had runs for: redeliveries taken from spilled pages (not the runs a spill moves there from the
 * head). Counted when the write applies, so a receive that dies after it counts too.
 */
export function countingPageTakes(
  store: DispatchStore,
  receiving: { readonly consumer: string; fromPages: number },
  nowMs: () => number,
): DispatchStore {
  const counted = (runs: readonly DeliveryRun[]) =>
    new Set(
      runs
        .filter(
          (run) =>
            run.state.kind === 'held' &&
            run.state.consumerId === receiving.consumer &&
            (run.state.timeoutAtMs === undefined || run.state.timeoutAtMs > nowMs()),
        )
        .flatMap((run) => runPositions(run).map(String)),
    );
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'casPage') return value.bind(target);
      return async (...args: Parameters<DispatchStore['casPage']>) => {
        const [cursorId, page, , next] = args;
        const [before] = await target.readPages(cursorId, [page]);
        const written = await target.casPage(...args);
        if (written) {
          const runs = before?.runs ?? [];
          const known = new Set(runs.flatMap((run) => runPositions(run).map(String)));
          const had = counted(runs);
          receiving.fromPages += [...counted(next.runs)].filter(
            (position) => known.has(position) && !had.has(position),
          ).length;
        }
        return written;
      };
    },
  });
}

/** The store with one deliberate defect, or as it is. */
export function mutate(store: InMemoryDispatchStore, mutation: Mutation | undefined): DispatchStore {
  if (!mutation) return store;
  const timeouts = { claims: 0 };
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const original = value.bind(target);
      if (mutation === 'noAheadAck' && property === 'raiseAheadAck') return async () => undefined;
      if (mutation === 'dropTracker' && property === 'putTracker') return async () => undefined;
      if (mutation === 'blindHeadWrites' && property === 'casHead') {
        return async (cursorId: string, _version: number, head: Parameters<DispatchStore['casHead']>[2]) => {
          const current = await target.readHead(cursorId);
          return original(cursorId, current?.version ?? 0, head);
        };
      }
      if (mutation === 'noFencing' && property === 'readHead') {
        return async (cursorId: string) => {
          const record = await original(cursorId);
          if (!record?.head.owner) return record;
          const { fenced: _fenced, ...head } = record.head;
          return { ...record, head: { ...head, owner: { ...head.owner, leaseUntilMs: 0 } } };
        };
      }
      if (mutation === 'casRetryLost' && (property === 'casHead' || property === 'casPage')) {
        return refusingOwnRetries(target, property, timeouts);
      }
      if (mutation === 'blindDeadLetterClaims' && (property === 'casHead' || property === 'casPage')) {
        return blindDeadLetterClaims(target, property);
      }
      if (mutation === 'earlyRelease' && property === 'putTracker') {
        return (cursorId: string, entries: readonly TrackerEntry[]) =>
          original(
            cursorId,
            entries.map((entry) => ({ ...entry, dueAtMs: entry.dueAtMs - 60_000 })),
          );
      }
      if (mutation === 'earlyRelease' && (property === 'casHead' || property === 'casPage')) {
        const early = (runs: readonly DeliveryRun[]) =>
          runs.map((run) =>
            run.state.kind === 'released'
              ? { ...run, state: { ...run.state, dueAtMs: run.state.dueAtMs - 60_000 } }
              : run,
          );
        if (property === 'casHead') {
          return (cursorId: string, version: number, head: DispatchHead) =>
            original(cursorId, version, {
              ...head,
              runs: early(head.runs),
              ...(head.trackerDueAtMs !== undefined ? { trackerDueAtMs: head.trackerDueAtMs - 60_000 } : {}),
            });
        }
        return (cursorId: string, page: PageRef, version: number, next: { runs: readonly DeliveryRun[] }) =>
          original(cursorId, page, version, { ...next, runs: early(next.runs) });
      }
      return original;
    },
  });
}

/** One in this many claims that apply under `casRetryLost` time out (their answer is lost, the retry refused). */
const CAS_TIMEOUT_ONE_IN = 8;

/** Entries held by consumers (not the dead-letter step) in `runs`. */
function heldCount(runs: readonly DeliveryRun[]): number {
  return runs
    .filter((run) => run.state.kind === 'held' && run.state.consumerId !== DEAD_LETTER_HOLDER)
    .reduce((sum, run) => sum + run.n, 0);
}

/**
 * The store's compare-and-set of `property` without its write tokens (the store before them): a
 * retry after a timeout is refused for the version its own first attempt wrote, so the engine takes
 * a claim that committed for a lost race. Besides the simulation's own timeouts (call faults), one
 * in CAS_TIMEOUT_ONE_IN claims (writes that make consumers hold more) that apply answers so, as a
 * timed-out request retried would.
 */
function refusingOwnRetries(
  store: InMemoryDispatchStore,
  property: 'casHead' | 'casPage',
  timeouts: { claims: number },
) {
  const timedOut = (before: readonly DeliveryRun[], after: readonly DeliveryRun[]) =>
    heldCount(after) > heldCount(before) && ++timeouts.claims % CAS_TIMEOUT_ONE_IN === 0;
  if (property === 'casHead') {
    return async (cursorId: string, version: number, head: DispatchHead) => {
      const current = await store.readHead(cursorId);
      if (current && current.version !== version) return { ok: false as const, current };
      const outcome = await store.casHead(cursorId, version, head);
      if (!outcome.ok || !timedOut(current?.head.runs ?? [], head.runs)) return outcome;
      return { ok: false as const, current: (await store.readHead(cursorId)) ?? current };
    };
  }
  return async (cursorId: string, page: PageRef, version: number, next: { runs: readonly DeliveryRun[] }) => {
    const [current] = await store.readPages(cursorId, [page]);
    if ((current?.version ?? 0) !== version) return false;
    return (await store.casPage(cursorId, page, version, next)) && !timedOut(current?.runs ?? [], next.runs);
  };
}

/** The store's compare-and-set of `property`, made blind for writes that claim runs for a dead-letter step. */
function blindDeadLetterClaims(store: InMemoryDispatchStore, property: 'casHead' | 'casPage') {
  const claims = (runs: readonly DeliveryRun[]) =>
    runs.some((run) => run.state.kind === 'held' && run.state.consumerId === DEAD_LETTER_HOLDER);
  if (property === 'casHead') {
    return async (cursorId: string, version: number, head: DispatchHead) => {
      const current = await store.readHead(cursorId);
      const blind = claims(head.runs) && current !== undefined;
      return store.casHead(cursorId, blind ? current.version : version, head);
    };
  }
  return async (cursorId: string, page: PageRef, version: number, next: { runs: readonly DeliveryRun[] }) => {
    const [current] = await store.readPages(cursorId, [page]);
    const blind = claims(next.runs) && current !== undefined;
    return store.casPage(cursorId, page, blind ? current.version : version, next);
  };
}
