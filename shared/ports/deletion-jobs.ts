/** A subscription a deletion removes: its name and the cursor of the incarnation being deleted. */
export interface DoomedSubscription {
  readonly name: string;
  readonly cursorId: string;
}

/**
 * One topic partition's share of a topic or subscription deletion: what the deletion detaches
 * from the names (so a topic or subscription created again under them starts empty) and what it
 * then purges page by page (entries, cursors, queues, consumers). Captured before anything is
 * deleted, so a job resumed after a crash knows everything it has to remove.
 */
export interface DeletionJob {
  /** `<groupId>#<index:5>`: unique; sorts by group, then partition. */
  readonly jobId: string;
  /** The deletion call that created this job (one topic or subscription deletion). */
  readonly groupId: string;
  readonly createdAtMs: number;
  /**
   * A topic deletion: the record to remove, only while it is still this incarnation's, and its
   * partitions (0: not partitioned; the group has one job per partition).
   */
  readonly topic?: { readonly name: string; readonly createdAtMs: number; readonly partitions: number };
  /** The topic partition (full name). */
  readonly partition: string;
  /**
   * A topic deletion: the partition's ledgers, first one first (it names the incarnation: the
   * state is detached only while its first ledger is this one). Decimal strings.
   */
  readonly ledgerIds?: readonly string[];
  /** The subscriptions of the partition the job removes. */
  readonly subscriptions: readonly DoomedSubscription[];
  /** True once the names no longer reach what this job purges (records and state detached). */
  readonly detached: boolean;
  /** When a step last worked on the job (maintenance resumes jobs nobody touched for a while). */
  readonly touchedAtMs: number;
  /** When the next step is meant to run. */
  readonly dueAtMs: number;
}

/**
 * Deletions under way. Each job is small (one partition's ledgers and cursors); a topic of N
 * partitions is N jobs of one group. Listing reads only the jobs that exist: a deployment without
 * deletions under way pays one empty Query.
 */
export interface DeletionJobStore {
  /** Creates or replaces the job. Cost: one write. */
  save(job: DeletionJob): Promise<void>;
  /** Replaces the job only while it exists (a job another step finished stays gone). */
  update(job: DeletionJob): Promise<void>;
  get(jobId: string): Promise<DeletionJob | undefined>;
  /** Every job of a group, by jobId. */
  group(groupId: string): Promise<DeletionJob[]>;
  /** Every job under way, by jobId (oldest group first). Cost: one Query per 1 MB of jobs. */
  list(): Promise<DeletionJob[]>;
  remove(jobId: string): Promise<void>;
}
