import { Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { type TokenKeyType, tokenPublicKeyEnv, tokenSecretEnv } from '../../shared/config/load-config.ts';

/**
 * Where a deployment keeps the key that verifies tokens: the HS256 secret, or
 * a public key (RS256, ES256) when `keyType` is `publicKey`. Never the value
 * itself: the template and the functions' environment only ever name it.
 */
export type TokenSecretReference =
  /** A Secrets Manager secret (the generated one, or context `ackline:tokenSecretArn` / `ackline:tokenPublicKeyArn`), by complete ARN. */
  (
    | { readonly kind: 'secretsManager'; readonly secretArn: string; readonly kmsKeyArn?: string }
    /** An SSM parameter (context `ackline:tokenSecretParameter` / `ackline:tokenPublicKeyParameter`), by name. */
    | { readonly kind: 'ssmParameter'; readonly parameterName: string; readonly kmsKeyArn?: string }
  ) & {
    /** Default `secretKey`. */
    readonly keyType?: TokenKeyType;
  };

/**
 * Lets `grantee` read the token key and nothing else: `GetSecretValue` on
 * that one secret, or `GetParameter` on that one parameter, plus `kms:Decrypt`
 * through that service when the secret is encrypted with a customer managed
 * key (AWS managed keys need no grant). Returns the environment variable that
 * names it for shared/config/load-config.ts.
 */
export function grantTokenSecretRead(
  scope: Construct,
  grantee: IGrantable,
  reference: TokenSecretReference,
): Record<string, string> {
  const stack = Stack.of(scope);
  const names = reference.keyType === 'publicKey' ? tokenPublicKeyEnv : tokenSecretEnv;
  let environment: Record<string, string>;
  let viaService: string;
  if (reference.kind === 'secretsManager') {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [reference.secretArn] }),
    );
    environment = { [names.secretArn]: reference.secretArn };
    viaService = `secretsmanager.${stack.region}.${stack.urlSuffix}`;
  } else {
    const parameter = StringParameter.fromSecureStringParameterAttributes(scope, 'TokenSecretParameter', {
      parameterName: reference.parameterName,
    });
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['ssm:GetParameter'], resources: [parameter.parameterArn] }),
    );
    environment = { [names.parameterName]: reference.parameterName };
    viaService = `ssm.${stack.region}.${stack.urlSuffix}`;
  }
  if (reference.kmsKeyArn !== undefined) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [reference.kmsKeyArn],
        conditions: { StringEquals: { 'kms:ViaService': viaService } },
      }),
    );
  }
  return environment;
}
