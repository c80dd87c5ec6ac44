import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { type TokenSecretClients, tokenSecretReader } from '../../shared/adapters/token-secret-source.ts';
import type { TokenSecretSource } from '../../shared/config/load-config.ts';

/**
 * Reads the token secret of a deployed stack (Secrets Manager or SSM) with a
 * client built for this one call and released afterwards: the authorizer asks
 * once per cold start. The handler imports this module dynamically, so the
 * embedded stack, which passes the secret itself, never loads either SDK
 * client, and a Lambda bundle evaluates them only when a secret is fetched.
 */
export async function readDeployedTokenSecret(source: TokenSecretSource, region: string): Promise<string> {
  const created: { destroy(): void }[] = [];
  const clients: TokenSecretClients = {
    secretsManager: () => track(created, new SecretsManagerClient({ region, maxAttempts: 3 })),
    ssm: () => track(created, new SSMClient({ region, maxAttempts: 3 })),
  };
  try {
    return await tokenSecretReader(source, clients).readSecret();
  } finally {
    for (const client of created) client.destroy();
  }
}

function track<T extends { destroy(): void }>(created: { destroy(): void }[], client: T): T {
  created.push(client);
  return client;
}
