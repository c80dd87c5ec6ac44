import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { TokenVerifier, type VerifiedToken } from '../../shared/adapters/jose-tokens.ts';
import { systemClock } from '../../shared/adapters/system-clock.ts';
import { publicKeyFrom, secretKeyFrom, type TokenKey } from '../../shared/adapters/token-keys.ts';
import {
  type AuthorizerConfig,
  loadAuthorizerConfig,
  METRICS_NAMESPACE,
  metricNames,
  serviceNameOf,
} from '../../shared/config/load-config.ts';
import { type TokenRefusal, TokenRefusedError } from '../../shared/domain/token-refusal.ts';
import {
  authorizationHeaderValues,
  TOKEN_EXPIRES_AT_MS,
  TOKEN_REFUSAL,
  TOKEN_VALID_FROM_MS,
} from '../../shared/http/credentials.ts';

export interface AuthorizerDependencies {
  readonly verifier: TokenVerifier;
  readonly superuserRoles: readonly string[];
  readonly logger: Logger;
  /** Counts refused tokens (`tokenRefused`), flushed at the end of the invocation that refused. */
  readonly metrics: Metrics;
}

export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
  context?: Context,
) => Promise<APIGatewayAuthorizerResult>;

/** The principal of an answer that carries a refusal: no role, so no handler serves it. */
export const REFUSED_PRINCIPAL = 'unauthenticated';

/**
 * API Gateway REQUEST authorizer: verifies `Authorization: Bearer <JWT>` and
 * hands the role to the handlers in `requestContext.authorizer`. It decides
 * only "who"; what the role may do on a topic is checked by the handlers
 * against the permission store, so refusals there carry a precise reason.
 *
 * A refused token is answered with an Allow whose context names the failed
 * check (TOKEN_REFUSAL) and no role, and the handlers answer it 401 with that
 * reason (shared/http/credentials.ts requireCurrentCredentials, which every
 * route runs first). API Gateway answers a thrown 'Unauthorized' or a Deny
 * with one fixed gateway response, which cannot say which check failed.
 *
 * Its answer depends on the Authorization header's value and nothing else of
 * the request, and it allows the whole API: that is what lets API Gateway
 * cache it per header value and reuse it for any path and method (a policy
 * naming the requested method ARN would answer 403 to the next path). What a
 * cached answer cannot see, the token's `exp` or `nbf` passing and a second
 * Authorization header, the handlers check on every request.
 */
export function makeHandler(deps: AuthorizerDependencies): AuthorizerHandler {
  const refuse = (event: APIGatewayRequestAuthorizerEvent, refusal: TokenRefusal) => {
    // The log names the check that failed, never the token.
    deps.logger.info('bearer token refused', { reason: refusal });
    deps.metrics.addMetric(metricNames.tokenRefused, MetricUnit.Count, 1);
    return answer(event, REFUSED_PRINCIPAL, { [TOKEN_REFUSAL]: refusal });
  };
  return async (event, context) => {
    if (context) deps.logger.addContext(context);
    deps.logger.setCorrelationId(event.requestContext?.requestId);
    try {
      const headers = authorizationHeaderValues(event);
      // Two Authorization headers are ambiguous (proxies disagree on which one counts): refuse both.
      if (headers.length > 1) return refuse(event, 'ambiguous');
      const match = headers[0] ? /^Bearer\s+(\S+)$/i.exec(headers[0]) : null;
      if (!match?.[1]) return refuse(event, 'missing');
      let token: VerifiedToken;
      try {
        token = await deps.verifier.verify(match[1]);
      } catch (error) {
        if (error instanceof TokenRefusedError) return refuse(event, error.refusal);
        throw error;
      }
      return answer(event, token.role, {
        role: token.role,
        superuser: String(deps.superuserRoles.includes(token.role)),
        ...(token.refusedFromMs === undefined ? {} : { [TOKEN_EXPIRES_AT_MS]: token.refusedFromMs }),
        ...(token.validFromMs === undefined ? {} : { [TOKEN_VALID_FROM_MS]: token.validFromMs }),
      });
    } finally {
      // Only refusals add a metric; an empty flush would log a warning per request.
      if (deps.metrics.hasStoredMetrics()) deps.metrics.publishStoredMetrics();
    }
  };
}

function answer(
  event: APIGatewayRequestAuthorizerEvent,
  principalId: string,
  context: Record<string, string | number>,
): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: {
      Version: '2012-10-17',
      // The whole API: the verdict depends on the token only, so it may be cached.
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: apiWildcard(event.methodArn) }],
    },
    context,
  };
}

/** `arn:...:apiId/stage/METHOD/path` -> `arn:...:apiId/stage/*`. */
function apiWildcard(methodArn: string): string {
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

/**
 * The cold start: configuration, then the token key. The embedded stack
 * passes the key material itself (ACKLINE_TOKEN_SECRET or
 * ACKLINE_TOKEN_PUBLIC_KEY); a deployed stack names a Secrets Manager secret
 * or an SSM parameter, read once here. If that read fails, or the material is
 * not a key, the invocation fails (API Gateway answers 500) and the next one
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
  const { source, type } = config.tokenKey;
  let key: TokenKey;
  try {
    const material =
      source.kind === 'value'
        ? source.secret
        : await (await import('./deployed-token-secret.ts')).readDeployedTokenSecret(source, config.region);
    key = type === 'secretKey' ? secretKeyFrom(material) : publicKeyFrom(material);
  } catch (error) {
    logger.error('token key unavailable: requests fail with 500 until it can be read', {
      error: error as Error,
      keyType: type,
      source: source.kind === 'value' ? { kind: 'value' } : source,
    });
    throw error;
  }
  return makeHandler({
    verifier: new TokenVerifier({
      key,
      roleClaim: config.tokenRoleClaim,
      ...(config.tokenAudience === undefined ? {} : { audience: config.tokenAudience }),
      clockToleranceSeconds: config.tokenClockToleranceSeconds,
      clock: systemClock,
    }),
    superuserRoles: config.superuserRoles,
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
