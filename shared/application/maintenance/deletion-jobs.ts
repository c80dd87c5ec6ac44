import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { DeletionJob } from '../../ports/deletion-jobs.ts';
import type { SubscriptionRecord, TopicRecord } from '../../ports/topic-catalog.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { doorbellOf } from '../consumers/doorbells.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** Items one purge call deletes (a Query page of keys, then BatchWriteItem). */
export const PURGE_PAGE_ITEMS = 100;
/** Pages one step purges before handing the rest to the next step: a step stays a few seconds. */
export const PURGE_PAGES_PER_STEP = 20;
/**
 * A job is finished only this long after it started, with a last pass over everything: a call
 * that started before the deletion (a publish that had allocated its ids, an acknowledgement, a
 * Lambda consumer's invocation, up to Lambda's 15-minute limit) may still write an item of the
 * old incarnation, and the last pass deletes it.
 */
export const PURGE_GRACE_MS = 16 * 60_000;
/** Maintenance resumes a job no step touched for this long after it was due (its scheduler message lost). */
export const STALE_DELETION_MS = 2 * 60_000;
/** Partitions captured and detached at once. */
const CONCURRENCY = 8;

/** One subscription of one partition, as a subscription deletion addresses it. */
export interface SubscriptionAt {
  readonly partition: TopicName;
  readonly subscription: SubscriptionRecord;
}

/**
 * Starts deleting a topic (every partition of it). Returns within a few seconds whatever its
 * backlog: the work that grows with the backlog is left to jobs.
 * 1. Capture, per partition, its ledgers and subscriptions, and record them as one job each (a
 *    crash from here on is finished by maintenance).
 * 2. Detach: subscription records and partition states go (each only while it is still this
 *    incarnation's), then the topic record, then the consumers of its subscriptions: calls see
 *    404, and a topic created again under the name gets new ledgers and cursors.
 * 3. Schedule the jobs' first purge step.
 */
export async function startTopicDeletion(
  ports: UseCasePorts,
  record: TopicRecord,
  partitions: readonly TopicName[],
): Promise<void> {
  const now = ports.clock.nowMs();
  const groupId = newGroupId(ports);
  const topic = {
    name: record.topic.toString(),
    createdAtMs: record.createdAtMs,
    partitions: record.partitions,
  };
  const jobs = await mapLimited(partitions, (partition, index) =>
    captureTopicJob(ports, { groupId, createdAtMs: now, topic }, partition, index),
  );
  await startJobs(ports, jobs);
}

/** One partition's job of a topic deletion: its ledgers and subscriptions as stored now. */
async function captureTopicJob(
  ports: UseCasePorts,
  group: Pick<DeletionJob, 'groupId' | 'createdAtMs'> & { readonly topic: NonNullable<DeletionJob['topic']> },
  partition: TopicName,
  index: number,
): Promise<DeletionJob> {
  const state = await ports.ledger.state(partition);
  const subscriptions = await ports.catalog.listSubscriptions(partition);
  return {
    jobId: jobIdOf(group.groupId, index),
    groupId: group.groupId,
    createdAtMs: group.createdAtMs,
    topic: group.topic,
    partition: partition.toString(),
    ...(state ? { ledgerIds: state.ledgers.map((ledger) => ledger.ledgerId.toString()) } : {}),
    subscriptions: subscriptions.map(({ name, cursorId }) => ({ name, cursorId })),
    detached: false,
    touchedAtMs: group.createdAtMs,
    dueAtMs: group.createdAtMs,
  };
}

/**
 * The jobs of a topic deletion whose call crashed before it detached anything: the ones it
 * recorded, and the partitions it did not get to captured now. The topic record is still there
 * (it goes last), so the name still reaches the same incarnation.
 */
async function completeGroup(ports: UseCasePorts, job: DeletionJob): Promise<DeletionJob[]> {
  const recorded = await ports.deletions.group(job.groupId);
  const topic = job.topic;
  if (!topic || recorded.length >= Math.max(1, topic.partitions)) return recorded;
  const name = TopicName.parse(topic.name);
  const have = new Set(recorded.map((candidate) => candidate.jobId));
  const partitions =
    topic.partitions === 0 ? [name] : Array.from({ length: topic.partitions }, (_, i) => name.partition(i));
  const missing = await mapLimited(partitions, async (partition, index) =>
    have.has(jobIdOf(job.groupId, index))
      ? undefined
      : captureTopicJob(
          ports,
          { groupId: job.groupId, createdAtMs: job.createdAtMs, topic },
          partition,
          index,
        ),
  );
  const captured = missing.filter((candidate): candidate is DeletionJob => candidate !== undefined);
  await mapLimited(captured, (candidate) => ports.deletions.save(candidate));
  return [...recorded, ...captured];
}

/**
 * Starts deleting a subscription on the partitions given: as startTopicDeletion, for the
 * subscription's records and cursors only (the records go, publishers are told, then jobs purge
 * the cursors, queues and consumers).
 */
export async function startSubscriptionDeletion(
  ports: UseCasePorts,
  subscriptions: readonly SubscriptionAt[],
): Promise<void> {
  const now = ports.clock.nowMs();
  const groupId = newGroupId(ports);
  const jobs = subscriptions.map(
    ({ partition, subscription }, index): DeletionJob => ({
      jobId: jobIdOf(groupId, index),
      groupId,
      createdAtMs: now,
      partition: partition.toString(),
      subscriptions: [{ name: subscription.name, cursorId: subscription.cursorId }],
      detached: false,
      touchedAtMs: now,
      dueAtMs: now,
    }),
  );
  await startJobs(ports, jobs);
}

async function startJobs(ports: UseCasePorts, jobs: readonly DeletionJob[]): Promise<void> {
  await mapLimited(jobs, (job) => ports.deletions.save(job));
  await detachGroup(ports, jobs);
  // The jobs are recorded: if this send fails, maintenance starts them (STALE_DELETION_MS later).
  await ports.scheduler
    .schedule(jobs.map((job) => ({ kind: 'purge' as const, jobId: job.jobId, dueAtMs: job.dueAtMs })))
    .catch(() => undefined);
}

/**
 * Takes the group's incarnation off the names, each write conditional on that incarnation, so a
 * step that runs again after the names were reused leaves the new topic or subscription alone.
 * The topic record goes last: until then the name cannot be created again, so no partition of it
 * can be initialized while an old state is still attached.
 */
async function detachGroup(ports: UseCasePorts, jobs: readonly DeletionJob[]): Promise<void> {
  await mapLimited(jobs, async (job) => {
    const partition = TopicName.parse(job.partition);
    for (const subscription of job.subscriptions) {
      await ports.catalog.deleteSubscription(partition, subscription.name, {
        cursorId: subscription.cursorId,
      });
    }
    const first = job.ledgerIds?.[0];
    if (first !== undefined) {
      await ports.ledger.detachPartition(partition, BigInt(first));
    } else {
      // A subscription deletion: publishers list the partition's subscriptions again.
      await ports.ledger.announceSubscriptions(partition).catch((error: unknown) => {
        if (!(error instanceof TopicNotFoundError)) throw error;
      });
    }
  });
  const topic = jobs[0]?.topic;
  if (topic) {
    const name = TopicName.parse(topic.name);
    // The catalog's cache forgets the record with the delete.
    await ports.catalog.deleteTopic(name, { createdAtMs: topic.createdAtMs });
  }
  // The consumers of the deleted subscriptions go now (a forced deletion disconnects them: their
  // next call answers 404), not only once the backlog is purged: their cursors are still there
  // until then, and a receive would go on handing out the deleted subscription's messages. The
  // last step removes them again (a call in flight may have renewed a membership meanwhile).
  await mapLimited(jobs, (job) => removeConsumers(ports, job));
  await mapLimited(jobs, (job) => ports.deletions.update({ ...job, detached: true }));
}

/** What one step did: `more` (another step is scheduled), `waiting` (the last pass is due later), `done`. */
export type DeletionStepOutcome = 'more' | 'waiting' | 'done';

/**
 * One step of deletion job `jobId` (the scheduler runs it; maintenance too, for a job whose
 * scheduler message was lost). Idempotent: two steps of one job at once only repeat deletes.
 * 1. A job not detached yet (its call crashed): detach its group first.
 * 2. Purge at most PURGE_PAGES_PER_STEP pages: the cursors' items, then the ledgers' entries.
 * 3. Everything purged: the doorbell queues, and the consumers of the deleted subscriptions
 *    (records and memberships).
 * 4. Before PURGE_GRACE_MS: the last pass is scheduled then. After it: the job is removed.
 */
export async function runDeletionStep(ports: UseCasePorts, jobId: string): Promise<DeletionStepOutcome> {
  const job = await ports.deletions.get(jobId);
  if (!job) return 'done';
  if (!job.detached) {
    await detachGroup(ports, job.topic ? await completeGroup(ports, job) : [job]);
  }
  const purges: (() => Promise<boolean>)[] = [
    ...job.subscriptions.map(
      ({ cursorId }) =>
        () =>
          ports.dispatch.purgeCursor(cursorId, PURGE_PAGE_ITEMS),
    ),
    ...(job.ledgerIds ?? []).map(
      (ledgerId) => () => ports.ledger.purgeLedger(BigInt(ledgerId), PURGE_PAGE_ITEMS),
    ),
  ];
  let pages = PURGE_PAGES_PER_STEP;
  let more = false;
  for (const purge of purges) {
    while (!more) {
      if (pages-- <= 0) more = true;
      else if (!(await purge())) break;
    }
    if (more) break;
  }
  const now = ports.clock.nowMs();
  if (more) return scheduleStep(ports, job, now, 'more');
  for (const { cursorId } of job.subscriptions) await ports.deliveryQueue.delete(doorbellOf(cursorId));
  await removeConsumers(ports, job);
  const lastPassAtMs = job.createdAtMs + PURGE_GRACE_MS;
  if (now < lastPassAtMs) return scheduleStep(ports, job, lastPassAtMs, 'waiting');
  await ports.deletions.remove(job.jobId);
  return 'done';
}

async function scheduleStep<O extends DeletionStepOutcome>(
  ports: UseCasePorts,
  job: DeletionJob,
  dueAtMs: number,
  outcome: O,
): Promise<O> {
  await ports.deletions.update({ ...job, detached: true, touchedAtMs: ports.clock.nowMs(), dueAtMs });
  await ports.scheduler.schedule([{ kind: 'purge', jobId: job.jobId, dueAtMs }]);
  return outcome;
}

/**
 * Consumers of the deleted subscriptions go with them: a member whose record names one of the
 * job's cursors (or whose record is gone already) leaves, and its record is deleted. A consumer
 * of a subscription created again under the name has another cursor and stays.
 */
async function removeConsumers(ports: UseCasePorts, job: DeletionJob): Promise<void> {
  const cursorIds = new Set(job.subscriptions.map(({ cursorId }) => cursorId));
  const base = TopicName.parse(job.partition).partitionedTopicName.toString();
  for (const { name } of job.subscriptions) {
    const key = subscriptionKey(base, name);
    for (const consumerId of await ports.consumers.members(key, 0)) {
      const record = await ports.consumers.get(consumerId);
      if (record && !record.partitions.some((partition) => cursorIds.has(partition.cursorId))) continue;
      if (record) await ports.consumers.delete(consumerId);
      await ports.consumers.leave(key, consumerId);
      // Also when the record was gone already: this container may still hold a copy of it.
      ports.consumers.forget(consumerId);
      ports.hints.renewals.delete(consumerId);
    }
  }
}

/**
 * Maintenance's share: one step of every job that no step touched for STALE_DELETION_MS after it
 * was due (a crash mid-delete, a scheduler message lost). Reads the jobs under way only.
 * @returns the jobs under way and how many were resumed.
 */
export async function resumeStaleDeletions(
  ports: UseCasePorts,
  options: { readonly before: () => boolean; readonly onFailure: (jobId: string, error: unknown) => void },
): Promise<{ readonly pending: number; readonly resumed: number }> {
  const jobs = await ports.deletions.list();
  const now = ports.clock.nowMs();
  let resumed = 0;
  for (const job of jobs) {
    if (!options.before()) break;
    if (now < Math.max(job.touchedAtMs, job.dueAtMs) + STALE_DELETION_MS) continue;
    resumed++;
    try {
      await runDeletionStep(ports, job.jobId);
    } catch (error) {
      options.onFailure(job.jobId, error);
    }
  }
  return { pending: jobs.length, resumed };
}

/** Starts with the creation time, so jobs list oldest first. */
function newGroupId(ports: UseCasePorts): string {
  return `${ports.clock.nowMs().toString().padStart(15, '0')}.${ports.ids.newId()}`;
}

function jobIdOf(groupId: string, index: number): string {
  return `${groupId}#${index.toString().padStart(5, '0')}`;
}

/** `task` over `inputs`, CONCURRENCY at a time, results in input order. */
async function mapLimited<T, R>(
  inputs: readonly T[],
  task: (input: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(inputs.length);
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const index = next++;
      results[index] = await task(inputs[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, inputs.length) }, worker));
  return results;
}
