import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig, metricNames } from '../../shared/config/load-config.ts';
import { type ApiHandler, httpApi, observeRoutes } from '../../shared/http/http-api.ts';
import type { HttpResponse, Route } from '../../shared/http/http-types.ts';
import { dataRoutes } from './routes.ts';

/** The produce route, as routes.ts declares it (test/infra/runtime checks that exactly one matches). */
export const isProduceRoute = (route: Route): boolean =>
  route.method === 'POST' && route.path === '/topics/{domain}/{tenant}/{namespace}/{topic}';

/** The data API: produce (Pulsar REST produce shape) and HTTP consumers. */
export function makeHandler(deps: Dependencies): ApiHandler {
  const routes = observeRoutes(dataRoutes(deps), isProduceRoute, (response) => {
    const published = publishedCount(response);
    if (published > 0) deps.metrics.addMetric(metricNames.published, MetricUnit.Count, published);
  });
  return httpApi(routes, deps.logger, deps.metrics);
}

/** Results with errorCode 0 in Pulsar's produce answer `{ messagePublishResults: [...] }`. */
export function publishedCount(response: HttpResponse): number {
  const results = (response.body as { messagePublishResults?: unknown } | undefined)?.messagePublishResults;
  if (!Array.isArray(results)) return 0;
  return results.filter((result) => (result as { errorCode?: unknown } | undefined)?.errorCode === 0).length;
}

let cached: ApiHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: ApiHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'data-api', { answersApiGateway: true }));
  return cached(event, context);
};
