/**
 * The one definition of ackline's stateful resources: DynamoDB tables (keys,
 * attribute types) and SQS queues (attributes). The CDK stateful stack and the
 * embedded stack's bootstrap both build from these values, so local and AWS
 * cannot drift apart. Pure data: no AWS SDK or CDK import.
 */

export type KeyType = 'S' | 'N';

export interface TableDefinition {
  /** Logical name: CDK construct id and the suffix of the physical name. */
  readonly logicalName: string;
  readonly partitionKey: { readonly name: string; readonly type: KeyType };
  readonly sortKey: { readonly name: string; readonly type: KeyType };
  /** The environment variable through which functions learn the physical name. */
  readonly envVar: string;
  /**
   * The attribute DynamoDB's TTL reads (epoch seconds), if items of the table expire. The
   * embedded stack's DynamoDB has none: maintenance deletes what expired there.
   */
  readonly timeToLiveAttribute?: string;
}

/**
 * Catalog: topics, partitions (managed-ledger state), subscriptions, ledger
 * index, permissions, counters, the admin audit log and the delivery handle
 * key. Item shapes are documented next to the adapters that own them.
 */
export const catalogTable: TableDefinition = {
  logicalName: 'Catalog',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  envVar: 'ACKLINE_CATALOG_TABLE',
  // Audit records (and their expiry markers) expire after the audit retention.
  timeToLiveAttribute: 'ttl',
};

/**
 * Entries: the messages of every ledger. pk = ledgerId, sk = the first entryId
 * of a chunk of consecutive entries written by one publish (one item per
 * publish batch, split at 350 KB), so a batch of small messages costs one
 * write sized by its bytes, not one write per message.
 */
export const entriesTable: TableDefinition = {
  logicalName: 'Entries',
  partitionKey: { name: 'ledgerId', type: 'N' },
  sortKey: { name: 'firstEntryId', type: 'N' },
  envVar: 'ACKLINE_ENTRIES_TABLE',
  // Batches expire some days after their publish; maintenance renews what retention keeps
  // (docs/design/storage.md#entry-expiry).
  timeToLiveAttribute: 'ttl',
};

/**
 * Cursors: one partition per subscription cursor (pk = cursorId). sk `H` is the
 * head (mark-delete position); sk `P#<ledgerId>#<page>` are ack pages holding
 * the individually acknowledged entry offsets of one page of a ledger in a
 * number set, so an acknowledgement is one commutative `ADD` on an item whose
 * size is bounded by the page size, whatever the number of holes.
 */
export const cursorsTable: TableDefinition = {
  logicalName: 'Cursors',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  envVar: 'ACKLINE_CURSORS_TABLE',
};

export const tables = [catalogTable, entriesTable, cursorsTable] as const;

export interface QueueDefinition {
  readonly logicalName: string;
  readonly visibilityTimeoutSeconds: number;
  readonly messageRetentionSeconds: number;
  /**
   * How long the dead-letter queue keeps a message. Longer than messageRetentionSeconds: a standard
   * queue's message keeps its original enqueue time when SQS moves it to the dead-letter queue, so
   * a shorter retention there would drop it before anyone looks
   * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html).
   */
  readonly deadLetterRetentionSeconds: number;
  /** Receives before SQS moves a message to the queue's dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly envVar: string;
}

/** Fourteen days: SQS's maximum retention, so a timer outlives any outage. */
export const MAX_RETENTION_SECONDS = 1_209_600;

/**
 * How long a doorbell keeps a ring: an hour. A ring only wakes receivers (the cursor is the record),
 * so a ring older than the longest SQS delay (900 s) plus a few maintenance runs wakes nobody
 * usefully: after an outage, rings kept for 14 days would make every long poll return at once on
 * stale rings. A due backlog whose ring expired is rung again by maintenance
 * (maintain-subscriptions.ts), and a receive reads the cursor whatever rang.
 */
export const DOORBELL_RETENTION_SECONDS = 3_600;

/**
 * The scheduler's delay queue: every timing decision (nack backoff, ack-timeout
 * backoff, delays past SQS's 900 s) travels through it. Its visibility timeout is six times the
 * scheduler's (SCHEDULER_TIMEOUT_SECONDS), as AWS advises for a Lambda event source. A batch that
 * fails or is throttled (the scheduler has no reserved concurrency by default, and a busy account
 * throttles it) comes back after it: 10 receives give a timer ten minutes of such trouble before
 * it is dead-lettered (AWS advises at least 5).
 */
export const schedulerQueue: QueueDefinition = {
  logicalName: 'SchedulerQueue',
  visibilityTimeoutSeconds: 60,
  messageRetentionSeconds: MAX_RETENTION_SECONDS,
  deadLetterRetentionSeconds: MAX_RETENTION_SECONDS,
  maxReceiveCount: 10,
  envVar: 'ACKLINE_SCHEDULER_QUEUE_URL',
};

/**
 * Template for the per-subscription doorbell queues the control plane creates
 * at run time. Their names start with the deployment's queue prefix, which
 * scopes the functions' IAM permissions. A subscription's runner (an event-driven consumer's SQS
 * event source) takes them: their visibility timeout is at least six times the runner's 29 s, as
 * AWS advises for an event source, and a ring its runner failed or Lambda throttled comes back
 * after it; 10 receives give a ring half an hour of such trouble before it is dead-lettered (AWS
 * advises at least 5). HTTP receivers set their own visibility per receive and delete what they
 * take. A queue keeps the attributes it was created with: subscriptions older than these values
 * keep theirs until an operator sets them (docs/deploying.md).
 */
export const subscriptionQueueTemplate: QueueDefinition = {
  logicalName: 'SubscriptionQueue',
  visibilityTimeoutSeconds: 180,
  messageRetentionSeconds: DOORBELL_RETENTION_SECONDS,
  deadLetterRetentionSeconds: MAX_RETENTION_SECONDS,
  maxReceiveCount: 10,
  envVar: 'ACKLINE_QUEUE_PREFIX',
};

/**
 * The tags every queue created at run time gets at CreateQueue: no stack holds those queues, so
 * the tags are how a stage's queues are found (cost allocation, teardown:
 * docs/deploying.md#tearing-down).
 */
export function runTimeQueueTags(stage: string): Record<string, string> {
  return { 'ackline:app': 'ackline', 'ackline:stage': stage };
}

/** The longest stage name: queue names (80 characters at most) start with it. */
export const MAX_STAGE_NAME_LENGTH = 20;

/**
 * A stage name: lower-case words of letters and digits joined by single hyphens, starting with a
 * letter (`dev`, `dev-eu`, `prod2`). No `--` and no trailing `-`, so that no stage's queue prefix
 * (`ackline-<stage>--`) starts another stage's queue names: IAM grants a stage `ackline-<stage>--*`.
 */
const STAGE_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * The stage name, checked (see STAGE_NAME).
 * @throws Error naming `what` (the context key or prop) and the rule.
 */
export function validStageName(stage: string, what = 'stage'): string {
  if (stage.length > MAX_STAGE_NAME_LENGTH || !STAGE_NAME.test(stage)) {
    throw new Error(
      `${what} must be lower-case letters and digits in words joined by single hyphens, starting ` +
        `with a letter, at most ${MAX_STAGE_NAME_LENGTH} characters (e.g. dev, dev-eu), got '${stage}'`,
    );
  }
  return stage;
}

/**
 * The prefix of every queue one deployment owns: `ackline-<stage>--`. The double hyphen is the
 * delimiter a stage name cannot hold (validStageName), so stage `dev`'s prefix `ackline-dev--`
 * never matches stage `dev-eu`'s queues (`ackline-dev-eu--...`), as `ackline-dev-` did.
 */
export function queuePrefix(stage: string): string {
  return `ackline-${stage}--`;
}
