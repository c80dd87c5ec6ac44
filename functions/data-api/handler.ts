import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { type ApiHandler, httpApi } from '../../shared/http/http-api.ts';
import { dataRoutes } from './routes.ts';

/** The data API: produce (Pulsar REST produce shape) and HTTP consumers. */
export function makeHandler(deps: Dependencies): ApiHandler {
  return httpApi(dataRoutes(deps), deps.logger);
}

let cached: ApiHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: ApiHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'data-api'));
  return cached(event, context);
};
