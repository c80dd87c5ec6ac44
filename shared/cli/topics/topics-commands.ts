import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { registerSubscriptionLimitCommands } from '../subscription-limit-commands.ts';
import { registerCursorCommands } from './cursor-commands.ts';
import { registerMessageCommands } from './message-commands.ts';
import { registerSchedulingCommands } from './scheduling-commands.ts';
import { registerStatsCommands } from './stats-commands.ts';
import { registerSubscriptionCommands } from './subscription-commands.ts';
import { registerTopicLifecycleCommands } from './topic-lifecycle-commands.ts';
import { registerTopicPermissionsCommands } from './topic-permissions-commands.ts';
import { registerTopicPoliciesCommands } from './topic-policies-commands.ts';

/**
 * `ackline-admin topics ...`: the pulsar-admin `topics` commands ackline serves, same names and
 * flags, registered by what each acts on: the topic, its subscriptions, its messages, a cursor,
 * its stats, its permissions, its policies.
 *
 * @example
 * registerTopicsCommands(program, context);
 * // $ ackline-admin topics acknowledgeMessage my-tenant/my-ns/orders -l 12 -e 3 -s billing
 */
export function registerTopicsCommands(program: Command, context: CliContext): void {
  const topics = program.command('topics').description('Operations on topics and their subscriptions');
  registerTopicLifecycleCommands(topics, context);
  registerSubscriptionCommands(topics, context);
  registerMessageCommands(topics, context);
  registerCursorCommands(topics, context);
  registerStatsCommands(topics, context);
  registerSchedulingCommands(topics, context);
  registerTopicPermissionsCommands(topics, context);
  registerTopicPoliciesCommands(topics, context);
  registerSubscriptionLimitCommands(topics, context, 'topics');
}
