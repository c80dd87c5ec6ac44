import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { InMemoryConsumerRegistry } from './in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from './in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryHandleKeyStore, InMemoryHandleKeyTable } from './in-memory-handle-key-store.ts';
import { InMemoryLedger } from './in-memory-ledger.ts';
import { InMemoryPermissionStore } from './in-memory-permission-store.ts';
import { inMemoryPorts } from './in-memory-ports.ts';
import { InMemoryScheduler } from './in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from './in-memory-topic-catalog.ts';
import { ManualClock } from './manual-clock.ts';

/**
 * Two "processes" (Lambda containers) over one set of stores and queues: two UseCasePorts sharing
 * the clock and every fake, each with its own per-container state: its caches in front of the
 * catalog, the ledger and the consumer registry, and its own ContainerHints (`ports.hints`).
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
  // One deployment, one handle key: a handle one process issued verifies in the other.
  const handleKeys = new InMemoryHandleKeyTable();
  const processOf = () =>
    inMemoryPorts({ ...shared, handleKeys: new InMemoryHandleKeyStore(handleKeys) }).ports;
  return [processOf(), processOf()];
}
