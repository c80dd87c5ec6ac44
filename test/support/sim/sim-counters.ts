import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';

/**
 * What the simulation's schedules exercised (issue 21, criterion 4): counted as they run, summed
 * over a run of many schedules, and gated (`gateFailures`) so that a change of the workload that
 * stops exercising something fails loudly rather than proving less.
 */
export interface SimCounters {
  schedules: number;
  deliveries: number;
  /** Deliveries with a redelivery count of 2 or more. */
  redeliveredTwice: number;
  /** Negative acks that released at least one entry. */
  nacksReleasing: number;
  /** Redeliveries of an entry its last holder still held, unacknowledged, past its ack timeout. */
  ackTimeoutsFired: number;
  deadLetters: number;
  /** Calls by a consumer that an owner took over from (Exclusive, Failover). */
  replacedOwnerCalls: number;
  /** Receives answered `blocked` (the consumer's or the subscription's cap). */
  capBlocks: number;
  /** Receives answered `standby` (Failover). */
  standbys: number;
  /** Invocations that died at their crash point (a publish's crash before its write aside). */
  crashes: number;
  /** Crashes by the port call index they died at (index = call number, 0-based). */
  crashesByCall: number[];
  /** Crash plans whose call index the invocation never reached (it ended first). */
  crashPlansUnreached: number;
  /** Port calls applied twice (a retried request). */
  callsAppliedTwice: number;
  /** Schedules whose redelivery counts were checked exactly up to the drain. */
  exactCountSchedules: number;
  /** Conditional writes (head, page, tracker) refused for their version. */
  lostConditionalWrites: number;
  /** Admin cursor resets that ran. */
  resets: number;
  /** Most port calls one invocation made, by action kind. */
  maxCallsByKind: Record<string, number>;
  /** Key_Shared consumers joining after the start (the consumer path; 0 in the engine's). */
  keySharedJoins: number;
  /** Store calls refused through every SDK retry (throttling): the caller got the error. */
  rejectedStoreCalls: number;
  /** Attempts of store calls refused (each retried by the SDK while attempts were left). */
  refusedAttempts: number;
  // The consumer path's (consumer-path-simulation.ts; 0 in the engine's):
  /** Schedules on a partitioned topic (2 or 3 partitions). */
  partitionedSchedules: number;
  /** Consumers that subscribed during the rounds (any type). */
  joins: number;
  /** Doorbell rings the fake SQS lost, and delivered twice. */
  ringsLost: number;
  ringsDuplicated: number;
  /** Receives of the fake SQS that answered nothing or part of what was there. */
  falseEmptyPolls: number;
  /** Long polls that waited (moving their invocation's clock). */
  longPollsWaited: number;
  /** Receives with a wait (a long poll). */
  longPolls: number;
  /** Containers replaced by a cold one after their invocation died. */
  coldStarts: number;
  /** Consumers maintenance removed after their lease lapsed (or whose close removed them). */
  lapsedReleased: number;
  heartbeats: number;
  /** Scheduler jobs run (close second passes, dead-letter timers, rings, hops). */
  schedulerJobs: number;
  /** Messages held with their last allowed count, dead-lettered with no consumer polling (checked in time). */
  deadLettersUnpolled: number;
  /** Nacked messages that came back within their backoff plus the slack (checked). */
  nackDeadlinesMet: number;
  /** Issue 24: operators' reschedules that moved a due time, those refused, deliveries checked against one. */
  reschedules: number;
  reschedulesRefused: number;
  reschedulesChecked: number;
  /** Issue 24: nacks with their own delay (`delayMs`). */
  nacksWithDelay: number;
  /** Issue 24 on the Lambda runner's path (consumer-path-runner.ts): its invocations, non-retryable failures dead-lettered at once (checked), RetryAfterError nacks that released. */
  runnerInvocations: number;
  nonRetryableDeadLetters: number;
  retryAfterNacks: number;
  /** Eventually consistent head reads answered with an earlier version, by how many versions behind (index 1 to 4). */
  staleHeadReads: number[];
  // The consumer path's admin side (consumer-path-admin.ts):
  /** Reset-cursor calls that answered, by target. */
  resetsToTimestamp: number;
  resetsToMessageId: number;
  resetsToEarliest: number;
  resetsToLatest: number;
  /** Deliveries of an entry delivered before a reset that covered it. */
  redeliveredAfterReset: number;
  /** Skips (of a backlog's first messages, or by ids) and expireMessages calls that answered. */
  adminSkips: number;
  adminExpiries: number;
  /** Messages the message TTL acknowledged (checked: never delivered after the maintenance that expired them answered). */
  ttlExpired: number;
  /** Entries retention deleted (checked: each acknowledged, none within the retention time). */
  retentionTrimmed: number;
  /** Deletions that answered, after which no consumer got anything (checked). */
  subscriptionDeletes: number;
  topicDeletes: number;
  /** Consumer path, Exclusive and Failover: deliveries whose consumer's ownership of the partition was checked (I6). */
  ownershipChecks: number;
  /** Consumer path, Shared and Key_Shared: rounds' receiving consumers whose holdings were checked against their cap (I7). */
  capChecks: number;
}

export function emptyCounters(): SimCounters {
  return {
    schedules: 0,
    deliveries: 0,
    redeliveredTwice: 0,
    nacksReleasing: 0,
    ackTimeoutsFired: 0,
    deadLetters: 0,
    replacedOwnerCalls: 0,
    capBlocks: 0,
    standbys: 0,
    crashes: 0,
    crashesByCall: [],
    crashPlansUnreached: 0,
    callsAppliedTwice: 0,
    exactCountSchedules: 0,
    lostConditionalWrites: 0,
    resets: 0,
    maxCallsByKind: {},
    keySharedJoins: 0,
    rejectedStoreCalls: 0,
    refusedAttempts: 0,
    partitionedSchedules: 0,
    joins: 0,
    ringsLost: 0,
    ringsDuplicated: 0,
    falseEmptyPolls: 0,
    longPollsWaited: 0,
    longPolls: 0,
    coldStarts: 0,
    lapsedReleased: 0,
    heartbeats: 0,
    schedulerJobs: 0,
    deadLettersUnpolled: 0,
    nackDeadlinesMet: 0,
    reschedules: 0,
    reschedulesRefused: 0,
    reschedulesChecked: 0,
    nacksWithDelay: 0,
    runnerInvocations: 0,
    nonRetryableDeadLetters: 0,
    retryAfterNacks: 0,
    staleHeadReads: [],
    resetsToTimestamp: 0,
    resetsToMessageId: 0,
    resetsToEarliest: 0,
    resetsToLatest: 0,
    redeliveredAfterReset: 0,
    adminSkips: 0,
    adminExpiries: 0,
    ttlExpired: 0,
    retentionTrimmed: 0,
    subscriptionDeletes: 0,
    topicDeletes: 0,
    ownershipChecks: 0,
    capChecks: 0,
  };
}

/** The gated counters (a number each), with what each means for the report. */
export const GATED = [
  'redeliveredTwice',
  'nacksReleasing',
  'ackTimeoutsFired',
  'deadLetters',
  'replacedOwnerCalls',
  'capBlocks',
  'crashes',
  'crashesPastCall8',
  'callsAppliedTwice',
  'exactCountSchedules',
  'rejectedStoreCalls',
  'keySharedJoins',
  'partitionedSchedules',
  'ringsLost',
  'ringsDuplicated',
  'longPollsWaited',
  'coldStarts',
  'lapsedReleased',
  'schedulerJobs',
  'deadLettersUnpolled',
  'nackDeadlinesMet',
  'staleReadsOneBehind',
  'staleReadsFourBehind',
  'resetsToTimestamp',
  'resetsToMessageId',
  'resetsToEarliest',
  'resetsToLatest',
  'redeliveredAfterReset',
  'adminSkips',
  'adminExpiries',
  'ttlExpired',
  'retentionTrimmed',
  'subscriptionDeletes',
  'topicDeletes',
  'ownershipChecks',
  'capChecks',
  'runnerInvocations',
  'nonRetryableDeadLetters',
  'retryAfterNacks',
] as const;

export type GatedCounter = (typeof GATED)[number];
export type Minima = Partial<Record<GatedCounter, number>>;

/** A gated counter's value (`crashesPastCall8`: crashes at call index 9 or later). */
export function gatedValue(counters: SimCounters, name: GatedCounter): number {
  if (name === 'crashesPastCall8') return counters.crashesByCall.slice(9).reduce((a, b) => a + (b ?? 0), 0);
  if (name === 'staleReadsOneBehind') return counters.staleHeadReads[1] ?? 0;
  if (name === 'staleReadsFourBehind') return counters.staleHeadReads[4] ?? 0;
  return counters[name];
}

/** One clear line per counter below its minimum: its name, value and minimum. */
export function gateFailures(counters: SimCounters, minima: Minima, label: string): string[] {
  return GATED.flatMap((name) => {
    const minimum = minima[name] ?? 0;
    const value = gatedValue(counters, name);
    return value < minimum
      ? [`coverage gate: ${label}: ${name} = ${value}, below its minimum ${minimum}`]
      : [];
  });
}

/**
 * `minima` for a run of `runs` schedules when they were set for `base`: pro rata, and halved again
 * for a shorter run (its counters vary more: the first 300 of 500 schedules may hold less than
 * 300/500 of them), floored.
 */
export function scaledMinima(minima: Minima, runs: number, base: number): Minima {
  const factor = runs >= base ? runs / base : runs / base / 2;
  return Object.fromEntries(
    Object.entries(minima).map(([name, value]) => [name, Math.floor((value ?? 0) * factor)]),
  );
}

/** The counters as report lines. */
export function formatCounters(counters: SimCounters, type: SubscriptionType | 'all'): string[] {
  const byCall = counters.crashesByCall.map((n, i) => `${i}:${n ?? 0}`).join(' ');
  const calls = Object.entries(counters.maxCallsByKind)
    .map(([kind, n]) => `${kind}:${n}`)
    .join(' ');
  return [
    `${type}: ${counters.schedules} schedules, ${counters.deliveries} deliveries`,
    `  deliveries with count >= 2 ${counters.redeliveredTwice}, nacks that released ${counters.nacksReleasing}, ack timeouts fired ${counters.ackTimeoutsFired}, dead letters ${counters.deadLetters}`,
    `  replaced owner's calls after a takeover ${counters.replacedOwnerCalls}, cap blocks ${counters.capBlocks}, standbys ${counters.standbys}, resets ${counters.resets}`,
    `  crashes ${counters.crashes} (past call 8: ${gatedValue(counters, 'crashesPastCall8')}; plans unreached ${counters.crashPlansUnreached}), calls applied twice ${counters.callsAppliedTwice}, lost conditional writes ${counters.lostConditionalWrites}`,
    `  schedules with exact counts ${counters.exactCountSchedules}`,
    `  crashes by call index ${byCall}`,
    `  most calls per invocation ${calls}`,
    `  rejected store calls ${counters.rejectedStoreCalls} (refused attempts ${counters.refusedAttempts})`,
    `  consumer path: partitioned ${counters.partitionedSchedules}, joins ${counters.joins} (Key_Shared ${counters.keySharedJoins}), heartbeats ${counters.heartbeats}, lapsed or closed consumers removed ${counters.lapsedReleased}, cold starts ${counters.coldStarts}, scheduler jobs ${counters.schedulerJobs}`,
    `  consumer path SQS: rings lost ${counters.ringsLost}, duplicated ${counters.ringsDuplicated}, empty or partial receives ${counters.falseEmptyPolls}, long polls ${counters.longPolls} (waited ${counters.longPollsWaited})`,
    `  consumer path checks: dead letters with no consumer polling ${counters.deadLettersUnpolled}, nacks back within backoff + 1 s ${counters.nackDeadlinesMet}`,
    `  consumer path steering: reschedules ${counters.reschedules} (refused ${counters.reschedulesRefused}, deliveries checked never early ${counters.reschedulesChecked}), nacks with their own delay ${counters.nacksWithDelay}`,
    `  consumer path Lambda runner: invocations ${counters.runnerInvocations}, non-retryable failures dead-lettered ${counters.nonRetryableDeadLetters}, RetryAfterError nacks ${counters.retryAfterNacks}`,
    `  consumer path admin: resets to a timestamp ${counters.resetsToTimestamp}, a MessageId ${counters.resetsToMessageId}, earliest ${counters.resetsToEarliest}, latest ${counters.resetsToLatest}; redelivered after a reset ${counters.redeliveredAfterReset}; skips ${counters.adminSkips}, expiries ${counters.adminExpiries}, TTL-expired ${counters.ttlExpired}, retention-trimmed ${counters.retentionTrimmed}; deleted subscriptions ${counters.subscriptionDeletes}, topics ${counters.topicDeletes}; ownership checks ${counters.ownershipChecks}, cap checks ${counters.capChecks}`,
    `  stale head reads by versions behind ${counters.staleHeadReads
      .map((n, i) => `${i}:${n ?? 0}`)
      .slice(1)
      .join(' ')}`,
  ];
}

/** `from` added into `into`. */
export function addCounters(into: SimCounters, from: SimCounters): void {
  for (const [name, value] of Object.entries(from) as [keyof SimCounters, unknown][]) {
    if (typeof value === 'number') (into[name] as number) += value;
  }
  from.crashesByCall.forEach((n, i) => {
    into.crashesByCall[i] = (into.crashesByCall[i] ?? 0) + (n ?? 0);
  });
  addByIndex(into.staleHeadReads, from.staleHeadReads);
  for (const [kind, n] of Object.entries(from.maxCallsByKind)) {
    into.maxCallsByKind[kind] = Math.max(into.maxCallsByKind[kind] ?? 0, n);
  }
}

/** `from`'s counts added into `into`'s, index by index. */
export function addByIndex(into: number[], from: readonly number[]): void {
  from.forEach((n, i) => {
    into[i] = (into[i] ?? 0) + (n ?? 0);
  });
}

/** A seed of its own for each subscription type: the types' scripts are not drawn alike. */
export function typeSeed(seed: number, type: SubscriptionType): number {
  let hash = 2_166_136_261;
  for (const char of `${seed}:${type}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16_777_619);
  return (hash >>> 0) % 2_147_483_647;
}
