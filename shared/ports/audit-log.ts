/**
 * One admin change of a cursor, as recorded for operators: an acknowledgeMessage (PIP-423), or a
 * reset-cursor, skip-all or expire-messages.
 */
export interface AuditRecord {
  /** Absent: acknowledgeMessage (records written before other operations were audited). */
  readonly operation?: 'resetCursor' | 'skipAll' | 'expireMessages' | 'reschedule';
  readonly atMs: number;
  readonly role: string;
  readonly topic: string;
  /** acknowledgeMessage: the position; other operations: their target (`timestamp 1700000000000`, `3:15`, `expireTimeInSeconds 60`). */
  readonly position: string;
  readonly subscriptions: readonly string[];
  readonly dryRun: boolean;
  /** 'acknowledged', or the refusal's status and reason. */
  readonly outcome: string;
  readonly requestId: string;
}

/** Audit records are kept this long unless configured otherwise (ACKLINE_AUDIT_RETENTION_DAYS). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 30;

/**
 * The admin acknowledgement audit log. Each record expires after the log's retention: on AWS
 * DynamoDB's TTL deletes it (usually within a few days of expiring); the
 * embedded stack's DynamoDB has no TTL, so maintenance calls `purgeExpired`.
 */
export interface AuditLog {
  record(record: AuditRecord): Promise<void>;
  /**
   * Deletes the records past their retention, while `before()` holds (the rest next time).
   * Cost: proportional to the topics whose records expired since the last call, and to those
   * records; nothing is scanned.
   * @returns how many records were deleted.
   */
  purgeExpired(nowMs: number, before: () => boolean): Promise<number>;
  /**
   * The topic's records newest first, at most `limit`, leaving out those past their retention at
   * `nowMs`: DynamoDB's TTL deletes an expired item days later, and until then reads return it.
   */
  list(topic: string, limit: number, nowMs: number): Promise<AuditRecord[]>;
}
