import { type LogHandler, LogLevel } from './types.ts';

/**
 * Where the compat layer reports what has no caller to reject: a listener that threw, a negative
 * acknowledgement that failed, a reader's background refresh that failed. As pulsar-client: the
 * client's `log` setting, else the handler of `Client.setLogHandler`, else the console (WARN and
 * ERROR only; pulsar-client's C++ logger also prints INFO).
 */
let globalHandler: LogHandler | undefined;

/** Sets the handler of every client made without a `log` setting (`Client.setLogHandler`). */
export function setGlobalLogHandler(handler: LogHandler): void {
  globalHandler = handler;
}

/** A client's logger: its own handler, else the global one, else the console. */
export class CompatLogger {
  constructor(
    private readonly handler: LogHandler | undefined,
    private readonly minLevel: LogLevel = LogLevel.INFO,
  ) {}

  /** Reports `message` at `level`, from the compat module `file`. */
  log(level: LogLevel, file: string, message: string): void {
    if (level < this.minLevel) return;
    const handler = this.handler ?? globalHandler;
    if (handler) {
      try {
        handler(level, file, 0, message);
      } catch {
        // A log handler that throws must not break the delivery loop that reported.
      }
      return;
    }
    if (level >= LogLevel.WARN)
      console.error(`[ackline/pulsar-client] ${LogLevel[level]} ${file}: ${message}`);
  }

  /** Reports an error (level ERROR). */
  error(file: string, message: string): void {
    this.log(LogLevel.ERROR, file, message);
  }
}

/** The message of any thrown value. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
