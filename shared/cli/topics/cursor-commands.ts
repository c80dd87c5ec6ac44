import type { Command } from 'commander';
import type { Topics } from '../../client/topics.ts';
import { type CliContext, CliError } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { integerParser } from '../option-parsers.ts';
import { parseRelativeTimeSeconds } from '../relative-time.ts';
import { type DryRunOption, fullName, type SubscriptionOption, TOPIC_ARGUMENT } from './topic-arguments.ts';

interface ResetCursorOptions extends SubscriptionOption, DryRunOption {
  readonly time?: string;
  readonly messageId?: string;
  readonly excludeResetPosition?: boolean;
}

/** Where `reset-cursor` moves a cursor: a timestamp, an edge, or a message id. */
type ResetCursorTarget = Parameters<Topics['resetCursor']>[2];

/**
 * `ackline-admin topics skip|reset-cursor|clear-backlog|expire-messages|expire-messages-all-subscriptions`:
 * moving a subscription's cursor, with pulsar-admin's names and flags.
 *
 * @example
 * registerCursorCommands(topics, context);
 * // $ ackline-admin topics reset-cursor my-tenant/my-ns/orders -s billing -t 1h
 */
export function registerCursorCommands(topics: Command, context: CliContext): void {
  registerSkip(topics, context);
  registerResetCursor(topics, context);
  registerClearBacklog(topics, context);
  registerExpireMessages(topics, context);
  registerExpireMessagesAllSubscriptions(topics, context);
}

function registerSkip(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('skip')
      .description("Skip (acknowledge) the next N messages of a subscription's backlog")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to skip on')
      .requiredOption('-n, --count <N>', 'number of messages to skip', integerParser(0))
      .action(async (topic: string, options: SubscriptionOption & { readonly count: number }) => {
        await context.admin().topics().skipMessages(topic, options.subscription, options.count);
        context.print(
          `Skipped ${options.count} messages on subscription ${options.subscription} of ${fullName(topic)}`,
        );
      }),
    'topics skip my-tenant/my-ns/orders -s billing -n 10',
  );
}

function registerResetCursor(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('reset-cursor')
      .description("Reset a subscription's cursor to a time before now (-t) or to a message id (-m)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to reset')
      .option(
        '-t, --time <time>',
        'how long ago, e.g. 100m, 3h, 2d: the cursor moves to the first message since',
      )
      .option('-m, --messageId <messageId>', 'ledgerId:entryId to reset to, or earliest (-1:-1) / latest')
      .option('-e, --exclude-reset-position', 'start after the message id rather than at it')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(async (topic: string, options: ResetCursorOptions) => {
        if ((options.time === undefined) === (options.messageId === undefined)) {
          throw new CliError('Give either -t/--time or -m/--messageId');
        }
        const to = resetCursorTargetOf(options, context.nowMs());
        const report = await context
          .admin()
          .topics()
          .resetCursor(topic, options.subscription, to, { dryRun: options.dryRun === true });
        if (options.dryRun) return context.printJson(report);
        context.print(
          `Reset the cursor of ${options.subscription} on ${fullName(topic)} to ${describeResetCursorTarget(to, options)}`,
        );
      }),
    'topics reset-cursor my-tenant/my-ns/orders -s billing -t 1h',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -m 12:3',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -m earliest',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -t 1h --dry-run',
  );
}

/** The target of `-t` (that long before `nowMs`) or `-m` (an edge, or ledgerId:entryId[:partition]). */
function resetCursorTargetOf(options: ResetCursorOptions, nowMs: number): ResetCursorTarget {
  if (options.time !== undefined) {
    return nowMs - parseRelativeTimeSeconds(options.time, { allowZero: true }) * 1000;
  }
  // pulsar-admin parses -1:-1 (MessageId.earliest, printed -1:-1:-1) like any id.
  const given = options.messageId?.toLowerCase();
  const edge = given === '-1:-1' || given === '-1:-1:-1' ? 'earliest' : given;
  if (edge === 'earliest' || edge === 'latest') return edge;
  const match = /^(\d+):(\d+)(?::(-?\d+))?$/.exec(options.messageId as string);
  if (!match) throw new CliError(`Invalid message id '${options.messageId}': expected ledgerId:entryId`);
  // The partition index, if given, is not needed: a ledger id names one partition.
  return {
    ledgerId: match[1] as string,
    entryId: match[2] as string,
    ...(options.excludeResetPosition === true ? { isExcluded: true } : {}),
  };
}

/** The target as `reset-cursor` reports it: an ISO time, the edge, or the message id as given. */
function describeResetCursorTarget(to: ResetCursorTarget, options: ResetCursorOptions): string {
  if (typeof to === 'number') return new Date(to).toISOString();
  if (typeof to === 'string') return to;
  return `${options.excludeResetPosition === true ? 'after ' : ''}${options.messageId}`;
}

function registerClearBacklog(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('clear-backlog')
      .description("Acknowledge a subscription's whole backlog")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to clear')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(async (topic: string, options: SubscriptionOption & DryRunOption) => {
        const report = await context
          .admin()
          .topics()
          .skipAllMessages(topic, options.subscription, {
            dryRun: options.dryRun === true,
          });
        if (options.dryRun) return context.printJson(report);
        context.print(`Cleared the backlog of ${options.subscription} on ${fullName(topic)}`);
      }),
    'topics clear-backlog my-tenant/my-ns/orders -s billing',
  );
}

function registerExpireMessages(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('expire-messages')
      .description('Acknowledge the messages of a subscription older than the given time')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to expire messages on')
      .requiredOption('-t, --expireTime <time>', 'age, e.g. 3600 (seconds), 100m, 3h')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(
        async (
          topic: string,
          options: SubscriptionOption & DryRunOption & { readonly expireTime: string },
        ) => {
          const seconds = parseRelativeTimeSeconds(options.expireTime, { allowZero: true });
          const report = await context
            .admin()
            .topics()
            .expireMessages(topic, options.subscription, seconds, {
              dryRun: options.dryRun === true,
            });
          if (options.dryRun) return context.printJson(report);
          context.print(
            `Expired the messages older than ${seconds} s on ${options.subscription} of ${fullName(topic)}`,
          );
        },
      ),
    'topics expire-messages my-tenant/my-ns/orders -s billing -t 1h',
  );
}

function registerExpireMessagesAllSubscriptions(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('expire-messages-all-subscriptions')
      .description('Acknowledge the messages older than the given time on every subscription of a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-t, --expireTime <time>', 'age, e.g. 3600 (seconds), 100m, 3h')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(async (topic: string, options: DryRunOption & { readonly expireTime: string }) => {
        const seconds = parseRelativeTimeSeconds(options.expireTime, { allowZero: true });
        const report = await context
          .admin()
          .topics()
          .expireMessagesForAllSubscriptions(topic, seconds, {
            dryRun: options.dryRun === true,
          });
        if (options.dryRun) return context.printJson(report);
        context.print(
          `Expired the messages older than ${seconds} s on every subscription of ${fullName(topic)}`,
        );
      }),
    'topics expire-messages-all-subscriptions my-tenant/my-ns/orders -t 1h',
  );
}
