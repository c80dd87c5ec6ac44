import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig, metricNames } from '../../shared/config/load-config.ts';
import { type ApiHandler, httpApi, observeRoutes } from '../../shared/http/http-api.ts';
import type { Route } from '../../shared/http/http-types.ts';
import { adminRoutes } from './routes.ts';

/** PIP-423's acknowledgeMessage, v2 and v1 paths (test/infra/runtime checks which routes match). */
export const isAcknowledgeMessageRoute = (route: Route): boolean =>
  route.method === 'POST' && route.path.endsWith('/acknowledgeMessage');

/** The admin REST API (Pulsar's /admin/v2 and /admin/v1 paths). */
export function makeHandler(deps: Dependencies): ApiHandler {
  const routes = observeRoutes(adminRoutes(deps), isAcknowledgeMessageRoute, (response) => {
    if (response.statusCode === 204)
      deps.metrics.addMetric(metricNames.adminAcknowledged, MetricUnit.Count, 1);
  });
  return httpApi(routes, deps.logger, deps.metrics);
}

let cached: ApiHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: ApiHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'admin-api', { answersApiGateway: true }));
  return cached(event, context);
};
