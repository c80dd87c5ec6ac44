import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';

/** Port methods that read storage (the others write, or touch no storage). */
const READ_METHOD =
  /^(get|list|read|load|state|members|expired|leases|due|next|seeded|group|first|owner|is|recent|peek)/;

/**
 * The caching decorators' answers from this container's cache (CachedTopicCatalog, CachedLedger,
 * CachedConsumerRegistry): not reads themselves. They read the store through their own port
 * methods, so run with the wrapper as `this` they have those reads counted, and only those.
 */
const CACHED_METHOD =
  /^(recent|recentTopic|recentState|firstUnwritten|knownOwnerOf|knownSubscriptions|subscriptionsAt)$/;

/**
 * Wraps the storage ports so that every read is counted by the items it returns (an array by
 * its length, anything else as one, nothing as none): what maintenance reads per run, over the
 * in-memory fakes, as the usage meter counts it on DynamoDB.
 */
export function countingPorts(ports: UseCasePorts): {
  ports: UseCasePorts;
  itemsRead: () => number;
  reset: () => void;
} {
  let items = 0;
  const wrap = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value === 'function' && typeof property === 'string' && CACHED_METHOD.test(property)) {
          return value.bind(receiver);
        }
        if (typeof value !== 'function' || typeof property !== 'string' || !READ_METHOD.test(property)) {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: unknown[]) => {
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          items += Array.isArray(result) ? result.length : result === undefined ? 0 : 1;
          return result;
        };
      },
    });
  const wrapped: UseCasePorts = {
    ...ports,
    catalog: wrap(ports.catalog),
    ledger: wrap(ports.ledger),
    dispatch: wrap(ports.dispatch),
    consumers: wrap(ports.consumers),
    deletions: wrap(ports.deletions),
    activity: wrap(ports.activity),
    audit: wrap(ports.audit),
  };
  return {
    ports: wrapped,
    itemsRead: () => items,
    reset: () => {
      items = 0;
    },
  };
}
