import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { type ApiHandler, httpApi } from '../../shared/http/http-api.ts';
import { adminRoutes } from './routes.ts';

/** The admin REST API (Pulsar's /admin/v2 and /admin/v1 paths). */
export function makeHandler(deps: Dependencies): ApiHandler {
  return httpApi(adminRoutes(deps), deps.logger);
}

let cached: ApiHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: ApiHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'admin-api'));
  return cached(event, context);
};
