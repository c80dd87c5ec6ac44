import type { ProxyHandler } from './local-gateway.ts';

/** Idle containers a pool keeps for reuse; one more finished is dropped. */
export const MAX_IDLE_CONTAINERS = 32;

/**
 * A function run as Lambda runs it: each container handles one request at a time, and a request
 * that finds every container busy starts a new one (a cold start: `start` builds the handler with
 * its own dependencies, so its SDK clients, caches and hints are its own). Idle containers
 * are reused, most recently used first, as Lambda tends to. The embedded stack runs the API
 * functions this way (unless ACKLINE_LAMBDA_CONTAINERS=one), so what a container remembers counts
 * only as often as it would on AWS, and requests held in one container (long polls) take nothing
 * from the others: no shared SDK socket pool to exhaust.
 */
export function lambdaPool(
  start: () => ProxyHandler,
  maxIdle: number = MAX_IDLE_CONTAINERS,
): ProxyHandler & { readonly containers: () => number; readonly idle: () => number } {
  const idle: ProxyHandler[] = [];
  let started = 0;
  const pooled = async (...args: Parameters<ProxyHandler>) => {
    let container = idle.pop();
    if (!container) {
      container = start();
      started++;
    }
    try {
      return await container(...args);
    } finally {
      // Past `maxIdle` the container is dropped (its memory and sockets go), as Lambda reclaims
      // idle ones: a burst of 300 long polls does not keep 300 containers for good.
      if (idle.length < maxIdle) idle.push(container);
    }
  };
  return Object.assign(pooled, { containers: () => started, idle: () => idle.length });
}
