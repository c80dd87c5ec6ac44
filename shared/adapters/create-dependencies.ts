import { Logger } from '@aws-lambda-powertools/logger';
import type { AcklineConfig } from '../config/load-config.ts';
import type { Clock } from '../ports/clock.ts';
import { systemClock } from './system-clock.ts';

/**
 * The composition root: builds every adapter once per cold start (or once per
 * embedded stack) from the configuration. Use cases receive ports, never this.
 */
export interface Dependencies {
  readonly config: AcklineConfig;
  readonly logger: Logger;
  readonly clock: Clock;
}

export function createDependencies(config: AcklineConfig, serviceName: string): Dependencies {
  const logger = new Logger({ serviceName: `ackline-${serviceName}` });
  return { config, logger, clock: systemClock };
}
