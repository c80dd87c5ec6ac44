import {
  GetSecretValueCommand,
  type GetSecretValueCommandOutput,
  ResourceNotFoundException as SecretNotFoundException,
} from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, type GetParameterCommandOutput, ParameterNotFound } from '@aws-sdk/client-ssm';
import type { TokenSecretSource } from '../config/load-config.ts';
import { AcklineError } from '../domain/errors.ts';

/**
 * Reads the key material that verifies bearer tokens (the HS256 secret, or a
 * public key) from where the deployment keeps it. The authorizer calls this once per cold start and keeps the value
 * in memory: one API call per execution environment, none per request. A
 * secret changed in place therefore reaches new execution environments only.
 */
export interface TokenSecretReader {
  readSecret(): Promise<string>;
}

/** The slice of `SecretsManagerClient` the reader uses; the SDK client is injected. */
export interface SecretValueClient {
  send(command: GetSecretValueCommand): Promise<GetSecretValueCommandOutput>;
}

/** The slice of `SSMClient` the reader uses; the SDK client is injected. */
export interface ParameterClient {
  send(command: GetParameterCommand): Promise<GetParameterCommandOutput>;
}

/** The secret could not be read: missing, empty, not a string, or access denied. Carries `cause`. */
export class TokenSecretUnavailableError extends AcklineError {}

/** A Secrets Manager secret (ARN or name) whose SecretString is the key material itself. */
export class SecretsManagerTokenSecret implements TokenSecretReader {
  constructor(
    private readonly client: SecretValueClient,
    private readonly secretId: string,
  ) {}

  async readSecret(): Promise<string> {
    let output: GetSecretValueCommandOutput;
    try {
      output = await this.client.send(new GetSecretValueCommand({ SecretId: this.secretId }));
    } catch (error) {
      throw new TokenSecretUnavailableError(
        error instanceof SecretNotFoundException
          ? `token secret ${this.secretId} does not exist`
          : `token secret ${this.secretId} could not be read`,
        { cause: error },
      );
    }
    return nonEmpty(output.SecretString, `token secret ${this.secretId} has no SecretString`);
  }
}

/** An SSM SecureString parameter, read with decryption. */
export class SsmParameterTokenSecret implements TokenSecretReader {
  constructor(
    private readonly client: ParameterClient,
    private readonly parameterName: string,
  ) {}

  async readSecret(): Promise<string> {
    let output: GetParameterCommandOutput;
    try {
      output = await this.client.send(
        new GetParameterCommand({ Name: this.parameterName, WithDecryption: true }),
      );
    } catch (error) {
      throw new TokenSecretUnavailableError(
        error instanceof ParameterNotFound
          ? `token secret parameter ${this.parameterName} does not exist`
          : `token secret parameter ${this.parameterName} could not be read`,
        { cause: error },
      );
    }
    return nonEmpty(output.Parameter?.Value, `token secret parameter ${this.parameterName} is empty`);
  }
}

/** The value given in the environment (embedded stack): no call at all. */
export class StaticTokenSecret implements TokenSecretReader {
  constructor(private readonly secret: string) {}

  async readSecret(): Promise<string> {
    return this.secret;
  }
}

/** The SDK clients a source may need; only the one its kind names is created and called. */
export interface TokenSecretClients {
  secretsManager(): SecretValueClient;
  ssm(): ParameterClient;
}

/**
 * The reader for a configured source.
 * @example
 * const secret = await tokenSecretReader(config.tokenSecret, clients).readSecret();
 */
export function tokenSecretReader(source: TokenSecretSource, clients: TokenSecretClients): TokenSecretReader {
  switch (source.kind) {
    case 'value':
      return new StaticTokenSecret(source.secret);
    case 'secretsManager':
      return new SecretsManagerTokenSecret(clients.secretsManager(), source.secretId);
    case 'ssmParameter':
      return new SsmParameterTokenSecret(clients.ssm(), source.parameterName);
  }
}

/** Used exactly as stored (no trimming), as `ackline-admin tokens create --secret-key` uses it. */
function nonEmpty(value: string | undefined, problem: string): string {
  if (value === undefined || value === '') throw new TokenSecretUnavailableError(problem);
  return value;
}
