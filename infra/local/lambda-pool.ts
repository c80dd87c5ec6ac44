import type { ProxyHandler } from './local-gateway.ts';

/**
 * A function run as Lambda runs it: each container handles one request at a time, and a request
 * that finds every container busy starts a new one (a cold start: `start` builds the handler with
 * its own dependencies, so its SDK clients, caches and hints are its own). Idle containers
 * are reused, most recently used first, as Lambda tends to. The bench runs the API functions this
 * way, so what a container remembers counts only as often as it would on AWS.
 */
export function lambdaPool(start: () => ProxyHandler): ProxyHandler & { readonly containers: () => number } {
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
      idle.push(container);
    }
  };
  return Object.assign(pooled, { containers: () => started });
}
