/**
 * The URL the local gateway announces when it binds `host`: an IPv6 address goes in brackets
 * (`http://[::1]:8080`), as a URL needs; any other host as it is.
 * @example gatewayUrl('::1', 8080); // 'http://[::1]:8080'
 */
export function gatewayUrl(host: string, port: number): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${bracketed}:${port}`;
}
