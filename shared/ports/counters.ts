/** What ackline counts as it works; the adapter publishes them as metrics (CloudWatch EMF on AWS). */
export type CounterName =
  | 'delivered'
  | 'redelivered'
  | 'acked'
  | 'nacked'
  | 'deadLettered'
  | 'schedulerHops'
  | 'ackTimeouts'
  /** Backlog tokens the feeder put on subscription queues (after a subscribe's or a rebuild's first part). */
  | 'backlogFed'
  /** Ids allocated but never written (their publisher died) that maintenance acknowledged. */
  | 'abandonedIdsAcknowledged';

export interface Counters {
  add(name: CounterName, value: number): void;
}

/** Counts nothing: tests and tools that do not publish metrics. */
export const noCounters: Counters = { add: () => undefined };
