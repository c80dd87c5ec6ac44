import { DEFAULT_ENGINE_LIMITS } from '../application/engine/engine-context.ts';
import { DEFAULT_ENTRY_EXPIRY_MS, expiryAllowedBy } from '../domain/entry-expiry.ts';
import { AcklineError } from '../domain/errors.ts';
import { DEFAULT_RETENTION, type RetentionPolicies, validateRetention } from '../domain/policies.ts';
import { DEFAULT_AUDIT_RETENTION_DAYS } from '../ports/audit-log.ts';
import { catalogTable, cursorsTable, entriesTable, schedulerQueue } from './resources.ts';

/**
 * Everything a function needs from its environment, read once at the
 * composition root (a cold start, or the embedded stack's boot). Variables are
 * required unless a default is stated; a missing one fails with its name.
 */
export interface AcklineConfig {
  readonly stage: string;
  readonly region: string;
  readonly tables: {
    readonly catalog: string;
    readonly entries: string;
    readonly cursors: string;
  };
  /** Every queue of this deployment has a name starting with this prefix. */
  readonly queuePrefix: string;
  readonly schedulerQueueUrl: string;
  /** Local endpoints (embedded stack); undefined on AWS. */
  readonly endpoints: { readonly dynamodb?: string; readonly sqs?: string };
  readonly superuserRoles: readonly string[];
  readonly clusterName: string;
  readonly maxEntriesPerLedger: number;
  /**
   * The longest delay one SQS message carries (SQS: 900 s). Longer waits hop
   * through the scheduler; a smaller value makes those hops testable in seconds.
   */
  readonly maxDelaySeconds: number;
  /**
   * Retention where no namespace or topic policy sets one (ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES
   * and ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB, Pulsar's broker settings; default 0 and 0).
   */
  readonly defaultRetention: RetentionPolicies;
  /**
   * Entry expiry (docs/design/storage.md#entry-expiry): how long after its publish, or its last
   * renewal, a stored batch expires (ACKLINE_ENTRY_EXPIRY_SECONDS, default 14 days), and whether
   * batches are written with it: only under a default retention that lets consumed entries go
   * within a quarter of it (0/0 and short time windows); 0 turns it off (retention then deletes,
   * billed as writes).
   */
  readonly entryExpiry: { readonly expireEntries: boolean; readonly entryExpiryMs: number };
  /** How long admin acknowledgement audit records are kept (ACKLINE_AUDIT_RETENTION_DAYS, default 30). */
  readonly auditRetentionDays: number;
  /**
   * Pulsar's maxUnackedMessagesPerConsumer and maxUnackedMessagesPerSubscription, deployment-wide
   * (ACKLINE_MAX_UNACKED_PER_CONSUMER, default 50,000; ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION, 200,000).
   */
  readonly maxUnackedPerConsumer: number;
  readonly maxUnackedPerSubscription: number;
}

/** A required setting is missing or malformed; the message names the variable. */
export class ConfigurationError extends AcklineError {}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new ConfigurationError(`missing environment variable ${name}`);
  }
  return value;
}

function optional(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function positiveInteger(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name, String(fallback));
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(`${name} must be a positive integer, got '${raw}'`);
  }
  return value;
}

function nonNegativeInteger(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name, String(fallback));
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigurationError(`${name} must be a non-negative integer, got '${raw}'`);
  }
  return value;
}

/** Pulsar's defaultRetentionTimeInMinutes/defaultRetentionSizeInMB (integers >= -1, both 0 or neither). */
function loadDefaultRetention(env: Env): RetentionPolicies {
  const time = optional(
    env,
    'ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES',
    String(DEFAULT_RETENTION.retentionTimeInMinutes),
  );
  const size = optional(
    env,
    'ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB',
    String(DEFAULT_RETENTION.retentionSizeInMB),
  );
  const retention = { retentionTimeInMinutes: Number(time), retentionSizeInMB: Number(size) };
  try {
    validateRetention(retention);
  } catch (error) {
    throw new ConfigurationError(
      `ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES '${time}' and ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB '${size}': ${(error as Error).message}`,
    );
  }
  return retention;
}

/** ACKLINE_ENTRY_EXPIRY_SECONDS, and whether the default retention lets batches carry it. */
function loadEntryExpiry(env: Env): AcklineConfig['entryExpiry'] {
  const seconds = nonNegativeInteger(env, 'ACKLINE_ENTRY_EXPIRY_SECONDS', DEFAULT_ENTRY_EXPIRY_MS / 1_000);
  const entryExpiryMs = seconds * 1_000;
  return {
    expireEntries: expiryAllowedBy(loadDefaultRetention(env), entryExpiryMs),
    // Renewal keeps running with expiry off (batches written while it was on still carry one).
    entryExpiryMs: entryExpiryMs > 0 ? entryExpiryMs : DEFAULT_ENTRY_EXPIRY_MS,
  };
}

export const DEFAULT_MAX_ENTRIES_PER_LEDGER = 50_000;
/** SQS's limit on DelaySeconds. */
export const SQS_MAX_DELAY_SECONDS = 900;

export function loadConfig(env: Env = process.env): AcklineConfig {
  const endpoints: { dynamodb?: string; sqs?: string } = {};
  const dynamodb = env.AWS_ENDPOINT_URL_DYNAMODB;
  const sqs = env.AWS_ENDPOINT_URL_SQS;
  if (dynamodb) endpoints.dynamodb = dynamodb;
  if (sqs) endpoints.sqs = sqs;
  return {
    stage: optional(env, 'ACKLINE_STAGE', 'dev'),
    region: optional(env, 'AWS_REGION', optional(env, 'AWS_DEFAULT_REGION', 'us-east-1')),
    tables: {
      catalog: required(env, catalogTable.envVar),
      entries: required(env, entriesTable.envVar),
      cursors: required(env, cursorsTable.envVar),
    },
    queuePrefix: required(env, 'ACKLINE_QUEUE_PREFIX'),
    schedulerQueueUrl: required(env, schedulerQueue.envVar),
    endpoints,
    superuserRoles: loadSuperuserRoles(env),
    clusterName: optional(env, 'ACKLINE_CLUSTER_NAME', 'standalone'),
    maxEntriesPerLedger: positiveInteger(
      env,
      'ACKLINE_MAX_ENTRIES_PER_LEDGER',
      DEFAULT_MAX_ENTRIES_PER_LEDGER,
    ),
    maxDelaySeconds: Math.min(
      SQS_MAX_DELAY_SECONDS,
      positiveInteger(env, 'ACKLINE_MAX_DELAY_SECONDS', SQS_MAX_DELAY_SECONDS),
    ),
    auditRetentionDays: positiveInteger(env, 'ACKLINE_AUDIT_RETENTION_DAYS', DEFAULT_AUDIT_RETENTION_DAYS),
    defaultRetention: loadDefaultRetention(env),
    entryExpiry: loadEntryExpiry(env),
    maxUnackedPerConsumer: positiveInteger(
      env,
      'ACKLINE_MAX_UNACKED_PER_CONSUMER',
      DEFAULT_ENGINE_LIMITS.maxUnackedPerConsumer,
    ),
    maxUnackedPerSubscription: positiveInteger(
      env,
      'ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION',
      DEFAULT_ENGINE_LIMITS.maxUnackedPerSubscription,
    ),
  };
}

/**
 * Where the authorizer finds the key material that verifies bearer tokens
 * (the HS256 secret, or a public key). The material never sits in a deployed
 * function's environment: on AWS the environment names a Secrets Manager
 * secret or an SSM parameter, read once per cold start
 * (shared/adapters/token-secret-source.ts). Only the embedded stack passes the
 * value itself.
 */
export type TokenSecretSource =
  /** `ACKLINE_TOKEN_SECRET` / `ACKLINE_TOKEN_PUBLIC_KEY`: the value itself (embedded stack, tests). */
  | { readonly kind: 'value'; readonly secret: string }
  /** `..._ARN`: a Secrets Manager secret whose SecretString is the key material. */
  | { readonly kind: 'secretsManager'; readonly secretId: string }
  /** `..._PARAMETER`: an SSM parameter (SecureString or String), read with decryption. */
  | { readonly kind: 'ssmParameter'; readonly parameterName: string };

/**
 * Which key verifies tokens, as Pulsar's `tokenSecretKey` (HS256) or
 * `tokenPublicKey` (RS256, ES256), and where it comes from.
 */
export interface TokenKeySource {
  readonly type: TokenKeyType;
  readonly source: TokenSecretSource;
}

export type TokenKeyType = 'secretKey' | 'publicKey';

/** The environment variables naming the token secret's source, in order of precedence. */
export const tokenSecretEnv = {
  value: 'ACKLINE_TOKEN_SECRET',
  secretArn: 'ACKLINE_TOKEN_SECRET_ARN',
  parameterName: 'ACKLINE_TOKEN_SECRET_PARAMETER',
} as const;

/** The environment variables naming the token public key's source, in order of precedence. */
export const tokenPublicKeyEnv = {
  value: 'ACKLINE_TOKEN_PUBLIC_KEY',
  secretArn: 'ACKLINE_TOKEN_PUBLIC_KEY_ARN',
  parameterName: 'ACKLINE_TOKEN_PUBLIC_KEY_PARAMETER',
} as const;

/** The other token settings, Pulsar's broker settings in brackets. */
export const tokenSettingsEnv = {
  /** The claim holding the role (`tokenAuthClaim`); default `sub`. */
  roleClaim: 'ACKLINE_TOKEN_AUTH_CLAIM',
  /** The audience tokens must name (`tokenAudience`); unset: not checked. */
  audience: 'ACKLINE_TOKEN_AUDIENCE',
  /** The claim holding the audience (`tokenAudienceClaim`); default `aud`. */
  audienceClaim: 'ACKLINE_TOKEN_AUDIENCE_CLAIM',
  /** Leeway on `exp` and `nbf` in seconds (`tokenAllowedClockSkewSeconds`); default 0. */
  clockToleranceSeconds: 'ACKLINE_TOKEN_CLOCK_TOLERANCE_SECONDS',
} as const;

/** The authorizer alone holds the token key; the other functions trust its verdict. */
export interface AuthorizerConfig {
  /** Which key verifies bearer tokens and where it comes from (not the key, unless embedded). */
  readonly tokenKey: TokenKeySource;
  /** The claim holding the role. */
  readonly tokenRoleClaim: string;
  /** The audience tokens must name, and the claim that holds it; absent: not checked. */
  readonly tokenAudience?: { readonly claim: string; readonly value: string };
  readonly tokenClockToleranceSeconds: number;
  readonly superuserRoles: readonly string[];
  readonly stage: string;
  readonly region: string;
}

export function loadAuthorizerConfig(env: Env = process.env): AuthorizerConfig {
  const audience = env[tokenSettingsEnv.audience];
  const audienceClaim = optional(env, tokenSettingsEnv.audienceClaim, 'aud');
  return {
    tokenKey: loadTokenKeySource(env),
    tokenRoleClaim: optional(env, tokenSettingsEnv.roleClaim, 'sub'),
    ...(audience ? { tokenAudience: { claim: audienceClaim, value: audience } } : {}),
    tokenClockToleranceSeconds: nonNegativeInteger(env, tokenSettingsEnv.clockToleranceSeconds, 0),
    superuserRoles: loadSuperuserRoles(env),
    stage: optional(env, 'ACKLINE_STAGE', 'dev'),
    region: optional(env, 'AWS_REGION', optional(env, 'AWS_DEFAULT_REGION', 'us-east-1')),
  };
}

/**
 * The secret key or the public key, not both: unlike Pulsar, which prefers the
 * secret, an ambiguous setting is refused.
 */
function loadTokenKeySource(env: Env): TokenKeySource {
  const secret = loadSource(env, tokenSecretEnv);
  const publicKey = loadSource(env, tokenPublicKeyEnv);
  if (secret && publicKey) {
    throw new ConfigurationError(
      `set the token secret (${tokenSecretEnv.value}...) or the token public key (${tokenPublicKeyEnv.value}...), not both`,
    );
  }
  if (secret) return { type: 'secretKey', source: secret };
  if (publicKey) return { type: 'publicKey', source: publicKey };
  throw new ConfigurationError(
    `missing environment variable ${tokenSecretEnv.value}, ${tokenSecretEnv.secretArn} or ${tokenSecretEnv.parameterName} ` +
      `(or ${tokenPublicKeyEnv.value}, ${tokenPublicKeyEnv.secretArn} or ${tokenPublicKeyEnv.parameterName})`,
  );
}

/**
 * The value wins (the embedded stack sets it); otherwise at most one of the
 * Secrets Manager ARN and the SSM parameter name.
 */
function loadSource(
  env: Env,
  names: { readonly value: string; readonly secretArn: string; readonly parameterName: string },
): TokenSecretSource | undefined {
  const value = env[names.value];
  if (value) return { kind: 'value', secret: value };
  const secretId = env[names.secretArn];
  const parameterName = env[names.parameterName];
  if (secretId && parameterName) {
    throw new ConfigurationError(`set one of ${names.secretArn} and ${names.parameterName}, not both`);
  }
  if (secretId) return { kind: 'secretsManager', secretId };
  if (parameterName) return { kind: 'ssmParameter', parameterName };
  return undefined;
}

/**
 * Names shared by the functions that emit metrics and the CDK stack that
 * graphs them and alarms on them: namespace, and the `service` dimension
 * Powertools adds (one per function). Every metric also carries `stage`.
 */
export const METRICS_NAMESPACE = 'Ackline';

/** The custom metrics, by the function that emits them (unit: Count, statistic: Sum). */
export const metricNames = {
  /** data-api, produce route: messages stored (results with errorCode 0). */
  published: 'published',
  /** admin-api, acknowledgeMessage (PIP-423): calls that acknowledged (204); dry runs excluded. */
  adminAcknowledged: 'adminAcknowledged',
  /** authorizer: bearer tokens refused (the handlers answer them 401 with the reason). */
  tokenRefused: 'tokenRefused',
} as const;

/**
 * What the maintenance function reports once per run (statistic: Maximum for
 * the gauges, Sum for the counts). The gauges describe the subscription queues
 * and cursors the control plane creates at run time, which the CDK stacks
 * cannot name one by one.
 */
export const maintenanceMetricNames = {
  /** Count, 1 per completed run: the heartbeat the stalled-maintenance alarm watches. */
  runs: 'maintenanceRuns',
  /** Count: partitions or subscriptions a step failed for (each logged). */
  failures: 'maintenanceFailures',
  /** Count: cursors whose mark-delete position the fold moved. */
  foldedCursors: 'foldedCursors',
  /** Count: individually acknowledged entries absorbed into mark-delete positions. */
  foldedEntries: 'foldedEntries',
  /** Gauge (Count): tokens in all the subscription dead-letter queues. */
  deadLetterMessages: 'subscriptionDeadLetterMessages',
  /** Gauge (Seconds): the longest any due unacknowledged message has waited, over the subscriptions visited. */
  backlogAgeSeconds: 'subscriptionBacklogAgeSeconds',
} as const;

/** `data-api` -> `ackline-data-api`: the Powertools service name (logs and metrics) of a function. */
export function serviceNameOf(functionName: string): string {
  return `ackline-${functionName}`;
}

function loadSuperuserRoles(env: Env): readonly string[] {
  return optional(env, 'ACKLINE_SUPERUSER_ROLES', 'admin')
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role.length > 0);
}
