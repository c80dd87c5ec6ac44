import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { verifyToken } from '../../shared/adapters/hs256-tokens.ts';
import { systemClock } from '../../shared/adapters/system-clock.ts';
import { loadAuthorizerConfig } from '../../shared/config/load-config.ts';
import type { Clock } from '../../shared/ports/clock.ts';

export interface AuthorizerDependencies {
  readonly tokenSecret: string;
  readonly superuserRoles: readonly string[];
  readonly clock: Clock;
}

export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;

/**
 * API Gateway REQUEST authorizer: verifies `Authorization: Bearer <JWT>` and
 * hands the role to the handlers in `requestContext.authorizer`. It decides
 * only "who"; what the role may do on a topic is checked by the handlers
 * against the permission store, so refusals there carry a precise reason.
 * Throwing 'Unauthorized' is API Gateway's contract for a 401.
 */
export function makeHandler(deps: AuthorizerDependencies): AuthorizerHandler {
  return async (event) => {
    const header = headerValue(event.headers, 'authorization');
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match?.[1]) throw new Error('Unauthorized');
    let role: string;
    try {
      role = verifyToken(match[1], deps.tokenSecret, deps.clock.nowMs()).sub;
    } catch {
      throw new Error('Unauthorized');
    }
    return {
      principalId: role,
      policyDocument: {
        Version: '2012-10-17',
        // The whole API: the verdict depends on the token only, so it may be cached.
        Statement: [
          { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: apiWildcard(event.methodArn) },
        ],
      },
      context: { role, superuser: String(deps.superuserRoles.includes(role)) },
    };
  };
}

function headerValue(headers: Record<string, string | undefined> | null, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

/** `arn:...:apiId/stage/METHOD/path` -> `arn:...:apiId/stage/*`. */
function apiWildcard(methodArn: string): string {
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

let cached: AuthorizerHandler | undefined;

export const handler: AuthorizerHandler = (event) => {
  cached ??= makeHandler({ ...loadAuthorizerConfig(), clock: systemClock });
  return cached(event);
};
