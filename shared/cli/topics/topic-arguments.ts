import { parseTopic } from '../../client/admin-paths.ts';

/** The `<topic>` argument's help: every form pulsar-admin accepts. */
export const TOPIC_ARGUMENT = 'persistent://tenant/namespace/topic, or tenant/namespace/topic';

/** `-s, --subscription <subscription>`, on the commands that act on one subscription. */
export interface SubscriptionOption {
  readonly subscription: string;
}

/** `-f, --force`: act even while consumers are connected. */
export interface ForceOption {
  readonly force?: boolean;
}

/** `--dry-run`: report, changing nothing. */
export interface DryRunOption {
  readonly dryRun?: boolean;
}

/** `persistent://tenant/namespace/topic` for any form pulsar-admin accepts. */
export function fullName(topic: string): string {
  const { domain, tenant, namespace, localName } = parseTopic(topic);
  return `${domain}://${tenant}/${namespace}/${localName}`;
}
