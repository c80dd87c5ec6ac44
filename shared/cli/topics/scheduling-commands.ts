import type { Command } from 'commander';
import { type CliContext, CliError } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { integerParser, parseList } from '../option-parsers.ts';
import { type DryRunOption, fullName, type SubscriptionOption, TOPIC_ARGUMENT } from './topic-arguments.ts';

interface ScheduledOptions extends SubscriptionOption {
  readonly from?: string;
  readonly until?: string;
  readonly limit?: number;
  readonly pageToken?: string;
  readonly histogram?: number;
}

interface PendingOptions extends SubscriptionOption {
  readonly consumer?: string;
  readonly limit?: number;
  readonly pageToken?: string;
}

interface RescheduleOptions extends SubscriptionOption, DryRunOption {
  readonly messageId: string;
  readonly deliverAt: string;
  readonly earlier?: boolean;
}

/**
 * `ackline-admin topics scheduled|pending|reschedule|preview` (issue 24, beyond pulsar-admin): what waits
 * on a subscription, who holds what, and moving one waiting message. Every answer is the server's
 * JSON (also with `--output json`).
 *
 * @example
 * registerSchedulingCommands(topics, context);
 * // $ ackline-admin topics scheduled my-tenant/my-ns/orders -s billing --limit 20
 */
export function registerSchedulingCommands(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('scheduled')
      .description(
        'List what waits on a subscription, by due time: delayed, nack backoff, ack timeout, gone consumer',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to look at')
      .option('--from <time>', 'due from: epoch ms or an ISO date (default: everything waiting)')
      .option('--until <time>', 'due until (included): epoch ms or an ISO date')
      .option('--limit <n>', 'entries per page (1 to 1000; histogram: to 100000)', integerParser(1))
      .option('--page-token <token>', "the previous answer's nextPageToken")
      .option(
        '--histogram <seconds>',
        'count per bucket of this many seconds instead of listing',
        integerParser(1),
      )
      .action(async (topic: string, options: ScheduledOptions) => {
        const answer = await context
          .admin()
          .topics()
          .getScheduledMessages(topic, options.subscription, {
            ...(options.from !== undefined ? { from: timeOf(options.from, '--from') } : {}),
            ...(options.until !== undefined ? { until: timeOf(options.until, '--until') } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.pageToken ? { pageToken: options.pageToken } : {}),
            ...(options.histogram !== undefined ? { histogramSeconds: options.histogram } : {}),
          });
        context.printJson(answer);
      }),
    'topics scheduled my-tenant/my-ns/orders -s billing --limit 20',
    'topics scheduled my-tenant/my-ns/orders -s billing --histogram 60',
  );
  withExamples(
    topics
      .command('pending')
      .description(
        'List what the consumers of a subscription hold (handed out, not acknowledged) and when it comes back',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to look at')
      .option('-c, --consumer <consumerId>', 'only what this consumer holds')
      .option('--limit <n>', 'entries per page (1 to 1000)', integerParser(1))
      .option('--page-token <token>', "the previous answer's nextPageToken")
      .action(async (topic: string, options: PendingOptions) => {
        const answer = await context
          .admin()
          .topics()
          .getPendingMessages(topic, options.subscription, {
            ...(options.consumer ? { consumer: options.consumer } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.pageToken ? { pageToken: options.pageToken } : {}),
          });
        context.printJson(answer);
      }),
    'topics pending my-tenant/my-ns/orders -s billing -c 3bY2k9',
  );
  registerReschedule(topics, context);
  registerPreview(topics, context);
  registerAcknowledgeMessages(topics, context);
}

function registerAcknowledgeMessages(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('acknowledgeMessages')
      .description(
        'Acknowledge many messages at once (ledgerId:entryId each), all or nothing, on the given or all subscriptions',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption(
        '-m, --messageIds <ids>',
        'comma-separated ledgerId:entryId (repeatable; at most 1000)',
        parseList,
      )
      .option(
        '-s, --subscriptionNames <names>',
        'comma-separated subscriptions (repeatable); default: all',
        parseList,
      )
      .option('--dry-run', 'report each message on each subscription, changing nothing')
      .action(
        async (
          topic: string,
          options: DryRunOption & { messageIds: string[]; subscriptionNames?: string[] },
        ) => {
          const report = await context
            .admin()
            .topics()
            .acknowledgeMessages(topic, options.messageIds, {
              ...(options.subscriptionNames ? { subscriptionNames: options.subscriptionNames } : {}),
              dryRun: options.dryRun === true,
            });
          if (options.dryRun) return context.printJson(report);
          context.print(`Acknowledged ${options.messageIds.length} messages on ${fullName(topic)}`);
        },
      ),
    'topics acknowledgeMessages my-tenant/my-ns/orders -m 12:3,12:4,12:9 -s billing',
  );
}

function registerPreview(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('preview')
      .description("Preview one message's next redeliveries under a consumer's policy (nack and ack timeout)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to look at')
      .requiredOption('-m, --messageId <messageId>', 'ledgerId:entryId of the message')
      .option('-c, --consumer <consumerId>', "whose policy (default: the subscription's first live consumer)")
      .option('-n, --count <n>', 'redeliveries to show (1 to 50, default 5)', integerParser(1))
      .action(
        async (
          topic: string,
          options: SubscriptionOption & { messageId: string; consumer?: string; count?: number },
        ) => {
          const answer = await context
            .admin()
            .topics()
            .previewRedeliveries(topic, options.subscription, {
              messageId: options.messageId,
              ...(options.consumer ? { consumer: options.consumer } : {}),
              ...(options.count !== undefined ? { count: options.count } : {}),
            });
          context.printJson(answer);
        },
      ),
    'topics preview my-tenant/my-ns/orders -s billing -m 12:3 -n 5',
  );
}

function registerReschedule(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('reschedule')
      .description("Move one waiting message's due time on a subscription (audited)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to act on')
      .requiredOption('-m, --messageId <messageId>', 'ledgerId:entryId of the message')
      .requiredOption(
        '-t, --deliver-at <time>',
        'the new due time: epoch ms, an ISO date, or +<n>s, +<n>m or +<n>h from now',
      )
      .option('--earlier', "allow a time earlier than its consumer's policy (or its deliverAt) gave")
      .option('--dry-run', 'report what would change, changing nothing')
      .action(async (topic: string, options: RescheduleOptions) => {
        const deliverAt = options.deliverAt.startsWith('+')
          ? context.nowMs() + relativeMs(options.deliverAt)
          : timeOf(options.deliverAt, '--deliver-at');
        const answer = await context
          .admin()
          .topics()
          .rescheduleMessage(topic, options.subscription, {
            messageId: options.messageId,
            deliverAt,
            ...(options.earlier ? { earlier: true } : {}),
            ...(options.dryRun ? { dryRun: true } : {}),
          });
        if (options.dryRun) return context.printJson(answer);
        context.print(
          `Rescheduled ${options.messageId} on ${options.subscription} of ${fullName(topic)} to ${new Date(deliverAt).toISOString()}`,
        );
      }),
    'topics reschedule my-tenant/my-ns/orders -s billing -m 12:3 -t +600s',
    'topics reschedule my-tenant/my-ns/orders -s billing -m 12:3 -t 2026-12-01T08:00:00Z --earlier --dry-run',
  );
}

/** Epoch ms, or an ISO 8601 date. */
function timeOf(value: string, option: string): number {
  if (/^\d{1,15}$/.test(value)) return Number(value);
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const relative = option === '--deliver-at' ? ', or +<n>s, +<n>m or +<n>h from now' : '';
    throw new CliError(`${option} must be epoch milliseconds or an ISO date${relative}, got '${value}'`);
  }
  return parsed;
}

/** `+600s`, `+10m`, `+2h`: milliseconds from now. */
function relativeMs(value: string): number {
  const match = /^\+(\d{1,9})([smh])$/.exec(value);
  if (!match) throw new CliError(`--deliver-at +<n>s|m|h, got '${value}'`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}
