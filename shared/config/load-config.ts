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
}

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

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

export const DEFAULT_MAX_ENTRIES_PER_LEDGER = 50_000;

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
  };
}

/** The authorizer alone holds the token secret; the other functions trust its verdict. */
export interface AuthorizerConfig {
  /** HS256 secret of the bearer tokens. */
  readonly tokenSecret: string;
  readonly superuserRoles: readonly string[];
}

export function loadAuthorizerConfig(env: Env = process.env): AuthorizerConfig {
  return {
    tokenSecret: required(env, 'ACKLINE_TOKEN_SECRET'),
    superuserRoles: loadSuperuserRoles(env),
  };
}

function loadSuperuserRoles(env: Env): readonly string[] {
  return optional(env, 'ACKLINE_SUPERUSER_ROLES', 'admin')
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role.length > 0);
}
