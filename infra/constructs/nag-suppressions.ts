import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** A cdk-nag rule suppressed on a resource, with the reason a reviewer reads. */
export interface NagSuppression {
  readonly id: string;
  readonly reason: string;
  readonly appliesTo?: readonly string[];
}

/**
 * cdk-nag's `NagSuppressions.addResourceSuppressions(construct, rules, true)` without depending on
 * cdk-nag: the same `cdk_nag.rules_to_suppress` metadata (cdk-nag's documented CloudFormation form)
 * on every CfnResource under `construct`. The construct package ships with `aws-cdk-lib` and
 * `constructs` as its only peers, and an app that runs cdk-nag sees the suppressions all the same.
 */
export function addNagSuppressions(construct: IConstruct, rules: readonly NagSuppression[]): void {
  for (const child of construct.node.findAll()) {
    if (!(child instanceof CfnResource)) continue;
    const existing = (child.getMetadata('cdk_nag') as { rules_to_suppress?: unknown[] } | undefined)
      ?.rules_to_suppress;
    const added = rules.map(({ id, reason, appliesTo }) => ({
      id,
      reason,
      ...(appliesTo === undefined ? {} : { applies_to: [...appliesTo] }),
    }));
    child.addMetadata('cdk_nag', { rules_to_suppress: [...(existing ?? []), ...added] });
  }
}
