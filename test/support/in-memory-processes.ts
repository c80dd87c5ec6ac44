import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { InMemoryConsumerRegistry } from './in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from './in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryLedger } from './in-memory-ledger.ts';
import { InMemoryPermissionStore } from './in-memory-permission-store.ts';
import { inMemoryPorts } from './in-memory-ports.ts';
import { InMemoryScheduler } from './in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from './in-memory-topic-catalog.ts';
import { ManualClock } from './manual-clock.ts';

/**
 * Two "processes" (Lambda containers) over one set of stores and queues: two UseCasePorts, each
 * with its own process memo (records, marks, caches), sharing the clock and every fake (those in
 * `parts` instead of the defaults).
 */
export function twoProcesses(parts: Partial<UseCasePorts> = {}): [UseCasePorts, UseCasePorts] {
  const shared = {
    clock: new ManualClock(1_700_000_000_000),
    catalog: new InMemoryTopicCatalog(),
    ledger: new InMemoryLedger(1000),
    dispatch: new InMemoryDispatchStore(),
    deliveryQueue: new InMemoryDeliveryQueue(),
    consumers: new InMemoryConsumerRegistry(),
    permissions: new InMemoryPermissionStore(),
    scheduler: new InMemoryScheduler(),
    ...parts,
  };
  return [inMemoryPorts(shared).ports, inMemoryPorts(shared).ports];
}
