import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { type TokenClaims, verifyToken } from '../../shared/adapters/hs256-tokens.ts';
import { systemClock } from '../../shared/adapters/system-clock.ts';
import {
  type AuthorizerConfig,
  loadAuthorizerConfig,
  METRICS_NAMESPACE,
  metricNames,
  serviceNameOf,
} from '../../shared/config/load-config.ts';
import { authorizationHeaderValues, TOKEN_EXPIRES_AT_MS } from '../../shared/http/credentials.ts';
import type { Clock } from '../../shared/ports/clock.ts';

export interface AuthorizerDependencies {
  readonly tokenSecret: string;
  readonly superuserRoles: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
  /** Counts refused tokens (`tokenRefused`), flushed at the end of the invocation that refused. */
  readonly metrics: Metrics;
}

export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
  context?: Context,
) => Promise<APIGatewayAuthorizerResult>;

/**
 * API Gateway REQUEST authorizer: verifies `Authorization: Bearer <JWT>` and
 * hands the role to the handlers in `requestContext.authorizer`. It decides
 * only "who"; what the role may do on a topic is checked by the handlers
 * against the permission store, so refusals there carry a precise reason.
 * Throwing 'Unauthorized' is API Gateway's contract for a 401.
 *
 * Its answer depends on the Authorization header's value and nothing else of
 * the request, and it allows the whole API: that is what lets API Gateway
 * cache it per header value and reuse it for any path and method (a policy
 * naming the requested method ARN would answer 403 to the next path). The two
 * things a cached answer cannot see, the token's expiry passing and a second
 * Authorization header, the handlers check on every request
 * (shared/http/credentials.ts requireCurrentCredentials).
 */
export function makeHandler(deps: AuthorizerDependencies): AuthorizerHandler {
  const refuse = (reason: string): never => {
    // The reason names what was wrong (malformed, signature, expiry), never the token.
    deps.logger.info('bearer token refused', { reason });
    deps.metrics.addMetric(metricNames.tokenRefused, MetricUnit.Count, 1);
    throw new Error('Unauthorized');
  };
  return async (event, context) => {
    if (context) deps.logger.addContext(context);
    deps.logger.setCorrelationId(event.requestContext?.requestId);
    try {
      const headers = authorizationHeaderValues(event);
      // Two Authorization headers are ambiguous (proxies disagree on which one counts): refuse both.
      if (headers.length > 1) return refuse('more than one Authorization header');
      const match = headers[0] ? /^Bearer\s+(\S+)$/i.exec(headers[0]) : null;
      if (!match?.[1]) return refuse('no bearer token');
      let claims: TokenClaims;
      try {
        claims = verifyToken(match[1], deps.tokenSecret, deps.clock.nowMs());
      } catch (error) {
        return refuse(error instanceof Error ? error.message : 'invalid token');
      }
      const role = claims.sub;
      return {
        principalId: role,
        policyDocument: {
          Version: '2012-10-17',
          // The whole API: the verdict depends on the token only, so it may be cached.
          Statement: [
            { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: apiWildcard(event.methodArn) },
          ],
        },
        context: {
          role,
          superuser: String(deps.superuserRoles.includes(role)),
          ...(claims.exp === undefined ? {} : { [TOKEN_EXPIRES_AT_MS]: claims.exp * 1000 }),
        },
      };
    } finally {
      // Only refusals add a metric; an empty flush would log a warning per request.
      if (deps.metrics.hasStoredMetrics()) deps.metrics.publishStoredMetrics();
    }
  };
}

/** `arn:...:apiId/stage/METHOD/path` -> `arn:...:apiId/stage/*`. */
function apiWildcard(methodArn: string): string {
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

/**
 * The cold start: configuration, then the token secret. The embedded stack
 * passes the secret itself (ACKLINE_TOKEN_SECRET); a deployed stack names a
 * Secrets Manager secret or an SSM parameter, read once here. If that read
 * fails, the invocation fails (API Gateway answers 500) and the next one
 * tries again.
 */
async function coldStart(config: AuthorizerConfig): Promise<AuthorizerHandler> {
  const serviceName = serviceNameOf('authorizer');
  const logger = new Logger({ serviceName });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName,
    defaultDimensions: { stage: config.stage },
  });
  let tokenSecret: string;
  if (config.tokenSecret.kind === 'value') {
    tokenSecret = config.tokenSecret.secret;
  } else {
    try {
      const { readDeployedTokenSecret } = await import('./deployed-token-secret.ts');
      tokenSecret = await readDeployedTokenSecret(config.tokenSecret, config.region);
    } catch (error) {
      logger.error('token secret unavailable: requests fail with 500 until it can be read', {
        error: error as Error,
        source: config.tokenSecret,
      });
      throw error;
    }
  }
  return makeHandler({
    tokenSecret,
    superuserRoles: config.superuserRoles,
    clock: systemClock,
    logger,
    metrics,
  });
}

let ready: Promise<AuthorizerHandler> | undefined;

export const handler: AuthorizerHandler = async (event, context) => {
  ready ??= Promise.resolve()
    .then(() => coldStart(loadAuthorizerConfig()))
    .catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
  return (await ready)(event, context);
};
