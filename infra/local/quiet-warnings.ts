/**
 * The AWS SDK warns on every start under Node 20 that releases after January
 * 2027 will need Node 22. Lambda runs ackline on nodejs22.x; on a developer's
 * Node 20 the notice is noise, so the embedded stack and the CLI drop that one
 * warning and let every other warning through.
 */
export function quietAwsSdkNodeWarning(): void {
  const emitWarning = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('NodeVersionSupportWarning')) return;
    (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
}
