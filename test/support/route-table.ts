import { adminRoutes } from '../../functions/admin-api/routes.ts';
import { dataRoutes } from '../../functions/data-api/routes.ts';
import { type ApiFunctionName, apiRoutes, publicPaths } from '../../infra/api-routes.ts';
import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import type { Route } from '../../shared/http/http-types.ts';

/** One route of the HTTP API, as the handlers declare it. */
export interface ApiRoute {
  readonly method: Route['method'];
  /** middy http-router syntax, e.g. `/admin/v2/{domain}/{tenant}/{namespace}/{topic}/stats`. */
  readonly path: string;
  readonly functionName: ApiFunctionName;
  /** Served without a token (infra/api-routes.ts `publicPaths`). */
  readonly isPublic: boolean;
  /** `METHOD path`, unique. */
  readonly key: string;
  /** Names of the `{param}` segments, in order. */
  readonly params: readonly string[];
}

/**
 * Building the route lists runs no use case: the handlers only close over the ports, so ports that
 * are never touched are enough to read the methods and paths.
 */
const inertDependencies = { ports: {}, router: undefined } as unknown as Dependencies;

const routeBuilders: Record<ApiFunctionName, (deps: Dependencies) => Route[]> = {
  'admin-api': adminRoutes,
  'data-api': dataRoutes,
};

/**
 * Every route of the API functions, read from the handlers' own route lists, so a route added there
 * is in every suite that iterates this table. Throws if a route sits under a first segment the
 * gateway (infra/api-routes.ts) sends to another function: it could never be reached.
 */
export function apiRouteTable(): ApiRoute[] {
  const table: ApiRoute[] = [];
  for (const [functionName, build] of Object.entries(routeBuilders) as [
    ApiFunctionName,
    (deps: Dependencies) => Route[],
  ][]) {
    for (const route of build(inertDependencies)) {
      const firstSegment = route.path.split('/')[1];
      const served = apiRoutes.find((candidate) => candidate.firstSegment === firstSegment);
      if (served?.functionName !== functionName) {
        throw new Error(
          `${route.method} ${route.path} of ${functionName} is not routed to it by the gateway`,
        );
      }
      table.push({
        method: route.method,
        path: route.path,
        functionName,
        isPublic: publicPaths.some((p) => p.method === route.method && p.path === route.path),
        key: `${route.method} ${route.path}`,
        params: [...route.path.matchAll(/\{([^/}]+)\}/g)].map((match) => match[1] as string),
      });
    }
  }
  return table;
}

interface CompiledRoute {
  readonly route: ApiRoute;
  readonly pattern: RegExp | undefined;
}

/**
 * Which route the stack runs for `method` and a normalised path (`new URL(...).pathname`), or
 * undefined for a 404. Mirrors the two steps of the stack: the gateway picks the function by the
 * first segment (and answers 404 for a bare `/admin` or `/admin/`); the function's middy
 * http-router tries its static paths, then its `{param}` paths in declaration order, each
 * parameter one non-empty segment, a trailing `/` allowed.
 */
export class RouteMatcher {
  private readonly compiled: CompiledRoute[];

  constructor(readonly routes: readonly ApiRoute[] = apiRouteTable()) {
    this.compiled = routes.map((route) => ({
      route,
      pattern: route.path.includes('{')
        ? new RegExp(`^${route.path.replace(/\/\{([^/}]+)\}/g, '/(?<$1>[^/]+)')}/?$`)
        : undefined,
    }));
  }

  match(method: string, pathname: string): { route: ApiRoute; params: Record<string, string> } | undefined {
    const firstSegment = pathname.split('/')[1] ?? '';
    const served = apiRoutes.find((candidate) => candidate.firstSegment === firstSegment);
    if (!served || pathname.length <= firstSegment.length + 2) return undefined;
    const candidates = this.compiled.filter(
      (c) => c.route.functionName === served.functionName && c.route.method === method,
    );
    for (const { route, pattern } of candidates) {
      if (!pattern && (pathname === route.path || pathname === `${route.path}/`))
        return { route, params: {} };
    }
    for (const { route, pattern } of candidates) {
      const found = pattern?.exec(pathname);
      if (found) return { route, params: { ...found.groups } };
    }
    return undefined;
  }
}
