// The authorizer's token secret at run time: which source the environment
// names (shared/config/load-config.ts) and how each source is read
// (shared/adapters/token-secret-source.ts), with fake SDK clients injected.
import {
  type GetSecretValueCommand,
  type GetSecretValueCommandOutput,
  ResourceNotFoundException,
} from '@aws-sdk/client-secrets-manager';
import {
  type GetParameterCommand,
  type GetParameterCommandOutput,
  ParameterNotFound,
} from '@aws-sdk/client-ssm';
import { describe, expect, it } from 'vitest';
import {
  type ParameterClient,
  SecretsManagerTokenSecret,
  type SecretValueClient,
  SsmParameterTokenSecret,
  TokenSecretUnavailableError,
  tokenSecretReader,
} from '../../../shared/adapters/token-secret-source.ts';
import { ConfigurationError, loadAuthorizerConfig } from '../../../shared/config/load-config.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ackline/prod/token-secret-AbC123';
const PARAMETER = '/ackline/prod/token-secret';

/** Answers GetSecretValue with `answer` and keeps every command it was sent. */
class FakeSecretsManager implements SecretValueClient {
  readonly commands: GetSecretValueCommand[] = [];
  constructor(private readonly answer: () => Promise<Partial<GetSecretValueCommandOutput>>) {}
  async send(command: GetSecretValueCommand): Promise<GetSecretValueCommandOutput> {
    this.commands.push(command);
    return { $metadata: {}, ...(await this.answer()) };
  }
}

/** Answers GetParameter with `answer` and keeps every command it was sent. */
class FakeSsm implements ParameterClient {
  readonly commands: GetParameterCommand[] = [];
  constructor(private readonly answer: () => Promise<Partial<GetParameterCommandOutput>>) {}
  async send(command: GetParameterCommand): Promise<GetParameterCommandOutput> {
    this.commands.push(command);
    return { $metadata: {}, ...(await this.answer()) };
  }
}

describe('loadAuthorizerConfig: the token key source', () => {
  const defaults = {
    tokenRoleClaim: 'sub',
    tokenClockToleranceSeconds: 0,
    superuserRoles: ['admin'],
    stage: 'dev',
    region: 'eu-west-1',
  };

  it.each([
    ['the value (embedded stack)', { ACKLINE_TOKEN_SECRET: 's3cret' }, { kind: 'value', secret: 's3cret' }],
    [
      'the value, even when a deployed source is also named',
      { ACKLINE_TOKEN_SECRET: 's3cret', ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN },
      { kind: 'value', secret: 's3cret' },
    ],
    [
      'a Secrets Manager secret',
      { ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN },
      { kind: 'secretsManager', secretId: SECRET_ARN },
    ],
    [
      'an SSM parameter',
      { ACKLINE_TOKEN_SECRET_PARAMETER: PARAMETER },
      { kind: 'ssmParameter', parameterName: PARAMETER },
    ],
  ])('reads the secret key from %s', (_, env, source) => {
    expect(loadAuthorizerConfig({ ...env, AWS_REGION: 'eu-west-1' })).toEqual({
      tokenKey: { type: 'secretKey', source },
      ...defaults,
    });
  });

  it.each([
    ['the value', { ACKLINE_TOKEN_PUBLIC_KEY: 'file:///k.pub' }, { kind: 'value', secret: 'file:///k.pub' }],
    [
      'a Secrets Manager secret',
      { ACKLINE_TOKEN_PUBLIC_KEY_ARN: SECRET_ARN },
      { kind: 'secretsManager', secretId: SECRET_ARN },
    ],
    [
      'an SSM parameter',
      { ACKLINE_TOKEN_PUBLIC_KEY_PARAMETER: PARAMETER },
      { kind: 'ssmParameter', parameterName: PARAMETER },
    ],
  ])('reads the public key from %s', (_, env, source) => {
    expect(loadAuthorizerConfig({ ...env, AWS_REGION: 'eu-west-1' }).tokenKey).toEqual({
      type: 'publicKey',
      source,
    });
  });

  it('reads the audience, its claim, the role claim and the clock tolerance', () => {
    const config = loadAuthorizerConfig({
      ACKLINE_TOKEN_SECRET: 's',
      ACKLINE_TOKEN_AUDIENCE: 'ackline',
      ACKLINE_TOKEN_AUDIENCE_CLAIM: 'scope',
      ACKLINE_TOKEN_AUTH_CLAIM: 'role',
      ACKLINE_TOKEN_CLOCK_TOLERANCE_SECONDS: '30',
    });

    expect(config).toMatchObject({
      tokenAudience: { claim: 'scope', value: 'ackline' },
      tokenRoleClaim: 'role',
      tokenClockToleranceSeconds: 30,
    });
  });

  it.each(['-1', '1.5', 'soon'])('refuses the clock tolerance %j', (value) => {
    expect(() =>
      loadAuthorizerConfig({ ACKLINE_TOKEN_SECRET: 's', ACKLINE_TOKEN_CLOCK_TOLERANCE_SECONDS: value }),
    ).toThrow(
      new ConfigurationError(
        `ACKLINE_TOKEN_CLOCK_TOLERANCE_SECONDS must be a non-negative integer, got '${value}'`,
      ),
    );
  });

  it('refuses a secret ARN and a parameter together', () => {
    expect(() =>
      loadAuthorizerConfig({
        ACKLINE_TOKEN_SECRET_ARN: SECRET_ARN,
        ACKLINE_TOKEN_SECRET_PARAMETER: PARAMETER,
      }),
    ).toThrow(
      new ConfigurationError(
        'set one of ACKLINE_TOKEN_SECRET_ARN and ACKLINE_TOKEN_SECRET_PARAMETER, not both',
      ),
    );
  });

  it('refuses a secret key and a public key together', () => {
    expect(() =>
      loadAuthorizerConfig({ ACKLINE_TOKEN_SECRET: 's', ACKLINE_TOKEN_PUBLIC_KEY_ARN: SECRET_ARN }),
    ).toThrow(/set the token secret \(ACKLINE_TOKEN_SECRET...\) or the token public key/);
  });

  it('names all six variables when none is set', () => {
    expect(() => loadAuthorizerConfig({})).toThrow(
      /missing environment variable ACKLINE_TOKEN_SECRET, ACKLINE_TOKEN_SECRET_ARN or ACKLINE_TOKEN_SECRET_PARAMETER \(or ACKLINE_TOKEN_PUBLIC_KEY, ACKLINE_TOKEN_PUBLIC_KEY_ARN or ACKLINE_TOKEN_PUBLIC_KEY_PARAMETER\)/,
    );
  });
});

describe('SecretsManagerTokenSecret', () => {
  it('asks GetSecretValue for the secret once and answers its SecretString as stored', async () => {
    const client = new FakeSecretsManager(async () => ({ SecretString: ' kept as is\n' }));

    const secret = await new SecretsManagerTokenSecret(client, SECRET_ARN).readSecret();

    expect(secret).toBe(' kept as is\n');
    expect(client.commands.map((command) => command.input)).toEqual([{ SecretId: SECRET_ARN }]);
  });

  it.each([
    [
      'a missing secret',
      async () => {
        throw new ResourceNotFoundException({ message: 'not found', $metadata: {} });
      },
      `token secret ${SECRET_ARN} does not exist`,
    ],
    [
      'a refused call',
      async () => {
        throw Object.assign(new Error('not authorized to perform: secretsmanager:GetSecretValue'), {
          name: 'AccessDeniedException',
        });
      },
      `token secret ${SECRET_ARN} could not be read`,
    ],
    [
      'a binary secret',
      async () => ({ SecretBinary: new Uint8Array([1]) }),
      `token secret ${SECRET_ARN} has no SecretString`,
    ],
    ['an empty secret', async () => ({ SecretString: '' }), `token secret ${SECRET_ARN} has no SecretString`],
  ])('fails with TokenSecretUnavailableError on %s', async (_, answer, message) => {
    const client = new FakeSecretsManager(answer);

    const failure = new SecretsManagerTokenSecret(client, SECRET_ARN).readSecret();

    await expect(failure).rejects.toThrow(new TokenSecretUnavailableError(message));
    await expect(failure).rejects.toBeInstanceOf(TokenSecretUnavailableError);
  });

  it('keeps the SDK error as the cause', async () => {
    const cause = new ResourceNotFoundException({ message: 'not found', $metadata: {} });
    const client = new FakeSecretsManager(async () => {
      throw cause;
    });

    const error = await new SecretsManagerTokenSecret(client, SECRET_ARN)
      .readSecret()
      .catch((e: unknown) => e);

    expect((error as Error).cause).toBe(cause);
  });
});

describe('SsmParameterTokenSecret', () => {
  it('asks GetParameter with decryption and answers the value', async () => {
    const client = new FakeSsm(async () => ({
      Parameter: { Name: PARAMETER, Type: 'SecureString', Value: 'abc' },
    }));

    const secret = await new SsmParameterTokenSecret(client, PARAMETER).readSecret();

    expect(secret).toBe('abc');
    expect(client.commands.map((command) => command.input)).toEqual([
      { Name: PARAMETER, WithDecryption: true },
    ]);
  });

  it.each([
    [
      'a missing parameter',
      async () => {
        throw new ParameterNotFound({ message: 'not found', $metadata: {} });
      },
      `token secret parameter ${PARAMETER} does not exist`,
    ],
    [
      'an empty parameter',
      async () => ({ Parameter: { Value: '' } }),
      `token secret parameter ${PARAMETER} is empty`,
    ],
  ])('fails with TokenSecretUnavailableError on %s', async (_, answer, message) => {
    await expect(new SsmParameterTokenSecret(new FakeSsm(answer), PARAMETER).readSecret()).rejects.toThrow(
      new TokenSecretUnavailableError(message),
    );
  });
});

describe('tokenSecretReader', () => {
  function clients() {
    const created: string[] = [];
    return {
      created,
      clients: {
        secretsManager: () => {
          created.push('secretsManager');
          return new FakeSecretsManager(async () => ({ SecretString: 'from-secrets-manager' }));
        },
        ssm: () => {
          created.push('ssm');
          return new FakeSsm(async () => ({ Parameter: { Value: 'from-ssm' } }));
        },
      },
    };
  }

  it.each([
    [{ kind: 'value', secret: 'inline' } as const, 'inline', []],
    [{ kind: 'secretsManager', secretId: SECRET_ARN } as const, 'from-secrets-manager', ['secretsManager']],
    [{ kind: 'ssmParameter', parameterName: PARAMETER } as const, 'from-ssm', ['ssm']],
  ])('reads $kind through the one client it needs', async (source, expected, createdClients) => {
    const { created, clients: factories } = clients();

    const secret = await tokenSecretReader(source, factories).readSecret();

    expect(secret).toBe(expected);
    expect(created).toEqual(createdClients);
  });
});
