/** What ackline counts as it works; the adapter publishes them as metrics (CloudWatch EMF on AWS). */
export type CounterName =
  | 'delivered'
  | 'redelivered'
  | 'acked'
  | 'nacked'
  | 'deadLettered'
  | 'schedulerHops'
  | 'ackTimeouts';

export interface Counters {
  add(name: CounterName, value: number): void;
}

/** Counts nothing: tests and tools that do not publish metrics. */
export const noCounters: Counters = { add: () => undefined };
