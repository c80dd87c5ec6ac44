import type { Scheduler as FcScheduler } from 'fast-check';
import type { EngineLimits } from '../../../shared/application/engine/engine-context.ts';
import type { IdGenerator, UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import type { Clock } from '../../../shared/ports/clock.ts';
import type { DispatchStore } from '../../../shared/ports/dispatch-store.ts';
import { InMemoryActivityIndex } from '../in-memory-activity-index.ts';
import { InMemoryAuditLog } from '../in-memory-audit-log.ts';
import { InMemoryConsumerRegistry } from '../in-memory-consumer-registry.ts';
import { InMemoryDeletionJobs } from '../in-memory-deletion-jobs.ts';
import type { InMemoryDispatchStore } from '../in-memory-dispatch-store.ts';
import { InMemoryHandleKeyStore, InMemoryHandleKeyTable } from '../in-memory-handle-key-store.ts';
import type { InMemoryLedger } from '../in-memory-ledger.ts';
import { InMemoryPermissionStore } from '../in-memory-permission-store.ts';
import { InMemoryPolicyStore } from '../in-memory-policy-store.ts';
import { inMemoryPorts } from '../in-memory-ports.ts';
import { InMemoryScheduler } from '../in-memory-scheduler.ts';
import { InMemoryTenantCatalog } from '../in-memory-tenant-catalog.ts';
import { InMemoryTopicCatalog } from '../in-memory-topic-catalog.ts';
import type { FakeSqs, InvocationTime } from './fake-sqs.ts';
import { type Invocation, scheduledCall } from './scheduled-ports.ts';

/**
 * What every container of one simulated deployment shares: the stores (DynamoDB's tables), the
 * queues (SQS), the handle key and the id source. Read directly (not through a container), they
 * are the truth the oracle checks against.
 */
export interface SimStores {
  readonly catalog: InMemoryTopicCatalog;
  readonly ledger: InMemoryLedger;
  readonly dispatch: InMemoryDispatchStore;
  /** What the containers call for the dispatch store: `dispatch`, or a deliberately broken version of it. */
  readonly engineStore: DispatchStore;
  readonly consumers: InMemoryConsumerRegistry;
  readonly scheduler: InMemoryScheduler;
  readonly sqs: FakeSqs;
  readonly permissions: InMemoryPermissionStore;
  readonly activity: InMemoryActivityIndex;
  readonly deletions: InMemoryDeletionJobs;
  readonly policies: InMemoryPolicyStore;
  readonly audit: InMemoryAuditLog;
  readonly tenants: InMemoryTenantCatalog;
  readonly handleKeys: InMemoryHandleKeyTable;
  readonly ids: IdGenerator;
}

export function simStores(parts: {
  ledger: InMemoryLedger;
  dispatch: InMemoryDispatchStore;
  engineStore?: DispatchStore;
  sqs: FakeSqs;
}): SimStores {
  let next = 0;
  return {
    ...parts,
    engineStore: parts.engineStore ?? parts.dispatch,
    catalog: new InMemoryTopicCatalog(),
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    permissions: new InMemoryPermissionStore(),
    activity: new InMemoryActivityIndex(),
    deletions: new InMemoryDeletionJobs(),
    policies: new InMemoryPolicyStore(),
    audit: new InMemoryAuditLog(),
    tenants: new InMemoryTenantCatalog(),
    handleKeys: new InMemoryHandleKeyTable(),
    ids: { newId: () => `id-${++next}` },
  };
}

/**
 * One invocation running in a container: its scheduled calls (which may crash or meet faults) and
 * its own clock: the deployment's clock, plus this invocation's skew (its host's clock is ahead by
 * that much) and what its waits took (a long poll moves its clock, not the others').
 */
export class ActiveCall implements InvocationTime {
  private elapsedMs = 0;

  constructor(
    readonly invocation: Invocation,
    private readonly deployment: Clock,
    readonly skewMs: number,
  ) {}

  nowMs(): number {
    return this.deployment.nowMs() + this.skewMs + this.elapsedMs;
  }

  /** The time without this invocation's skew (what the oracle compares). */
  trueNowMs(): number {
    return this.deployment.nowMs() + this.elapsedMs;
  }

  wait(ms: number): void {
    this.elapsedMs += Math.max(0, ms);
  }

  get waitedMs(): number {
    return this.elapsedMs;
  }
}

/**
 * One warm container (a Lambda execution environment): its UseCasePorts built once, as the
 * composition root builds them, with its own caching decorators (topic catalog, ledger, consumer
 * registry) and its own ContainerHints, over the deployment's shared stores. It runs one
 * invocation at a time (as Lambda does); every store and queue call of that invocation is a
 * scheduling point of it (scheduledCall). A container whose invocation died is replaced by a
 * cold one (empty caches and hints).
 */
export class SimContainer {
  current: ActiveCall | undefined;
  readonly ports: UseCasePorts;
  /** The tail of the invocations given to it, run one after the other. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    stores: SimStores,
    private readonly options: {
      deployment: Clock;
      scheduler: FcScheduler;
      limits: EngineLimits;
      /** The deployment's seeded random source (a receive's first partition, jitter): runs repeat. */
      random: () => number;
      /** Hears every call as it applies (each time, when applied twice), with the invocation that made it. */
      onCall?: (call: ActiveCall | undefined, port: string, method: string, args: unknown[]) => void;
    },
  ) {
    const clock: Clock = { nowMs: () => this.current?.nowMs() ?? options.deployment.nowMs() };
    const through = <T extends object>(target: T, label: string) => this.scheduled(target, label);
    const { ports } = inMemoryPorts({
      clock,
      catalog: through(stores.catalog, 'catalog'),
      ledger: through(stores.ledger, 'ledger'),
      dispatch: through(stores.engineStore, 'dispatch'),
      consumers: through(stores.consumers, 'consumers'),
      scheduler: through(stores.scheduler, 'scheduler'),
      deliveryQueue: through(
        stores.sqs.portFor(
          () => this.current ?? { nowMs: () => options.deployment.nowMs(), wait: () => undefined },
        ),
        'sqs',
      ),
      // Every store a call of the admin side or maintenance reaches is scheduled too: unscheduled
      // calls in a row (each a turn of the event loop) would look like a round with nothing left.
      permissions: through(stores.permissions, 'permissions'),
      activity: through(stores.activity, 'activity'),
      deletions: through(stores.deletions, 'deletions'),
      policies: through(stores.policies, 'policies'),
      audit: through(stores.audit, 'audit'),
      tenants: through(stores.tenants, 'tenants'),
      handleKeys: new InMemoryHandleKeyStore(stores.handleKeys),
      ids: stores.ids,
      engineLimits: options.limits,
      // A wait moves the running invocation's clock (as a long poll does), at a scheduling point.
      sleep: async (ms) => {
        this.current?.wait(ms);
        await options.scheduler.schedule(Promise.resolve(), `${name} sleep ${ms}`);
      },
      random: options.random,
    });
    this.ports = ports;
  }

  /**
   * Runs `work` as `call` once the container's earlier invocations ended (settled, or died: a dead
   * one frees the container, which the driver then replaces).
   */
  run<T>(call: ActiveCall, work: (ports: UseCasePorts) => Promise<T>): Promise<T> {
    const started = this.queue.then(() => {
      this.current = call;
      return work(this.ports);
    });
    const ended = Promise.race([started.then(() => undefined), call.invocation.died]).catch(() => undefined);
    this.queue = ended;
    return started;
  }

  /** `target` with each method call a scheduled call of the running invocation (direct when none runs). */
  private scheduled<T extends object>(target: T, label: string): T {
    const { scheduler } = this.options;
    return new Proxy(target, {
      get: (object, property, receiver) => {
        const value = Reflect.get(object, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = this.current;
          const apply = () => {
            this.options.onCall?.(call, label, String(property), args);
            return Promise.resolve((value as (...a: unknown[]) => unknown).apply(object, args));
          };
          if (!call) return apply();
          return scheduledCall(
            scheduler,
            call.invocation,
            `${this.name} ${label}.${String(property)}`,
            apply,
          );
        };
      },
    });
  }
}
