/**
 * One admin change of a cursor, as recorded for operators: an acknowledgeMessage (PIP-423), or a
 * reset-cursor, skip-all or expire-messages.
 */
export interface AuditRecord {
  /** Absent: acknowledgeMessage (records written before other operations were audited). */
  readonly operation?: 'resetCursor' | 'skipAll' | 'expireMessages';
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

export interface AuditLog {
  record(record: AuditRecord): Promise<void>;
  /** Newest first. */
  list(topic: string, limit: number): Promise<AuditRecord[]>;
}
