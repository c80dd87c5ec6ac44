/** One admin acknowledgement, as recorded for operators. */
export interface AuditRecord {
  readonly atMs: number;
  readonly role: string;
  readonly topic: string;
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
