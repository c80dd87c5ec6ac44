import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import type { Context } from 'aws-lambda';

/** A Powertools Logger that keeps the structured log lines instead of printing them. */
export class RecordingLogger extends Logger {
  readonly lines: Record<string, unknown>[] = [];

  protected override printLog(_logLevel: number, log: LogItem): void {
    this.lines.push({ ...log.getAttributes() });
  }
}

/**
 * Powertools Metrics that keeps each flushed EMF document instead of printing
 * it, so tests see exactly what CloudWatch would extract.
 */
export class RecordingMetrics extends Metrics {
  readonly flushed: EmfOutput[] = [];

  override publishStoredMetrics(): this {
    if (this.hasStoredMetrics()) this.flushed.push(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }

  /** Every `name -> value` flushed so far, one entry per flush. */
  values(): Record<string, unknown>[] {
    return this.flushed.map((emf) => {
      const names = emf._aws.CloudWatchMetrics.flatMap((directive) => directive.Metrics.map((m) => m.Name));
      return Object.fromEntries(names.map((name) => [name, (emf as Record<string, unknown>)[name]]));
    });
  }
}

/** A Lambda context as the runtime passes it. */
export function lambdaContext(functionName: string, awsRequestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
