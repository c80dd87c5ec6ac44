import { Position } from './position.ts';

/**
 * What became of a run's entries the last time they were handed out.
 * - `held`: a consumer has them (Pulsar's pendingAcks of that consumer) since `deliveredAtMs`; with
 *   an ack timeout (or a Lambda consumer's function timeout) they are due again at `timeoutAtMs`.
 * - `released`: nobody has them; they wait in the redelivery tracker until `dueAtMs` (nack backoff,
 *   a gone consumer, a delayed message, a Key_Shared entry routed to another member).
 */
export type RunState =
  | {
      readonly kind: 'held';
      readonly consumerId: string;
      readonly deliveredAtMs: number;
      readonly timeoutAtMs?: number;
    }
  | {
      readonly kind: 'released';
      readonly dueAtMs: number;
      /**
       * Why it waits, when not for the nack backoff or the deliverAt of its message (which its
       * count tells apart): `gone`, its consumer went (closed, lease lapsed, redeliverUnacknowledged);
       * `rescheduled`, an operator moved its due time. Only shown to operators (scheduled views).
       */
      readonly cause?: ReleaseCause;
    };

/** See RunState's `released.cause`. */
export type ReleaseCause = 'gone' | 'rescheduled';

/**
 * `n` consecutive entries of one ledger that share one delivery state: a delivery record, as
 * Pulsar's pendingAcks and redelivery tracker keep per entry, kept per run so that a batch of ten
 * costs one record. An entry's pending state is its run minus its acknowledgement: acks never
 * touch runs (they are commutative set additions), so a run may cover acknowledged entries, which
 * every reader skips.
 *
 * `deliveries` counts the times these entries were handed out on the subscription: a held run's
 * consumer got them with redeliveryCount `deliveries - 1`; a released run's next hand-out carries
 * redeliveryCount `deliveries` (0 for a delayed or routed entry nobody was handed yet).
 */
export interface DeliveryRun {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  readonly n: number;
  readonly deliveries: number;
  readonly state: RunState;
}

export function runStart(run: DeliveryRun): Position {
  return Position.of(run.ledgerId, run.entryId);
}

/** The entry after the run's last one (same ledger). */
export function runEnd(run: DeliveryRun): bigint {
  return run.entryId + BigInt(run.n);
}

export function runCovers(run: DeliveryRun, position: Position): boolean {
  return (
    run.ledgerId === position.ledgerId && position.entryId >= run.entryId && position.entryId < runEnd(run)
  );
}

export function runPositions(run: DeliveryRun): Position[] {
  return Array.from({ length: run.n }, (_, i) => Position.of(run.ledgerId, run.entryId + BigInt(i)));
}

/** The part of `run` from `fromEntryId` (included) to `toEntryId` (excluded), clipped to the run. */
export function sliceRun(run: DeliveryRun, fromEntryId: bigint, toEntryId: bigint): DeliveryRun | undefined {
  const start = fromEntryId > run.entryId ? fromEntryId : run.entryId;
  const end = toEntryId < runEnd(run) ? toEntryId : runEnd(run);
  if (end <= start) return undefined;
  return { ...run, entryId: start, n: Number(end - start) };
}

/**
 * Replaces the entries `entryIds` (all within `run`) by `replacement(entryId)` runs of one entry,
 * keeping the rest of the run as it was: the split a per-entry change (nack of one message of a
 * batch) makes. Adjacent replaced entries with equal states are merged back into one run.
 */
export function carveRun(
  run: DeliveryRun,
  entryIds: ReadonlySet<bigint>,
  replacement: (entryId: bigint) => Omit<DeliveryRun, 'ledgerId' | 'entryId' | 'n'>,
): DeliveryRun[] {
  const pieces: DeliveryRun[] = [];
  let keptFrom: bigint | undefined;
  const flushKept = (to: bigint) => {
    if (keptFrom === undefined) return;
    const kept = sliceRun(run, keptFrom, to);
    if (kept) pieces.push(kept);
    keptFrom = undefined;
  };
  for (let entryId = run.entryId; entryId < runEnd(run); entryId++) {
    if (!entryIds.has(entryId)) {
      keptFrom ??= entryId;
      continue;
    }
    flushKept(entryId);
    const next = { ledgerId: run.ledgerId, entryId, n: 1, ...replacement(entryId) };
    const last = pieces[pieces.length - 1];
    if (last && runEnd(last) === entryId && last.ledgerId === run.ledgerId && sameDelivery(last, next)) {
      pieces[pieces.length - 1] = { ...last, n: last.n + 1 };
    } else {
      pieces.push(next);
    }
  }
  flushKept(runEnd(run));
  return pieces;
}

function sameDelivery(a: DeliveryRun, b: DeliveryRun): boolean {
  return a.deliveries === b.deliveries && JSON.stringify(a.state) === JSON.stringify(b.state);
}

/** Runs ordered by position (ledger, then entry). */
export function compareRuns(a: DeliveryRun, b: DeliveryRun): number {
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  if (a.entryId !== b.entryId) return a.entryId < b.entryId ? -1 : 1;
  return 0;
}

/** The run among `runs` that covers `position`, if any. */
export function runCovering(runs: readonly DeliveryRun[], position: Position): DeliveryRun | undefined {
  return runs.find((run) => runCovers(run, position));
}
