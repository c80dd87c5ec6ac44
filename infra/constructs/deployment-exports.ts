/**
 * The CloudFormation exports through which another app's stacks find an ackline deployment:
 * StatefulStack exports them, AcklineSubscriptionConsumer imports them by stage. Named by the
 * stage, so a user names the deployment the way `cdk deploy -c ackline:stage=<stage>` did.
 */

/** What the stateful stack exports, per stage. */
export type DeploymentExport =
  | 'CatalogTableArn'
  | 'EntriesTableArn'
  | 'CursorsTableArn'
  | 'SchedulerQueueArn'
  | 'SchedulerQueueUrl';

/**
 * The export's name: `ackline-<stage>-<what>`, e.g. `ackline-prod-CatalogTableArn`.
 *
 * @example
 * Fn.importValue(deploymentExportName('prod', 'SchedulerQueueUrl'));
 */
export function deploymentExportName(stage: string, what: DeploymentExport): string {
  return `ackline-${stage}-${what}`;
}
