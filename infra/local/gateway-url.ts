/**
 * The URL clients call the local gateway at when it binds `host`: an IPv6 address in brackets
 * (`http://[::1]:8080`), and a wildcard bind (`0.0.0.0`, `::`) by its loopback address, which this
 * machine's clients reach it at.
 * @example gatewayUrl('::1', 8080); // 'http://[::1]:8080'
 */
export function gatewayUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  const bracketed = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `http://${bracketed}:${port}`;
}
