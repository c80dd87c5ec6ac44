import { describe, expect, it } from 'vitest';
import { gatewayUrl } from '../../../infra/local/gateway-url.ts';

describe('gatewayUrl (HOST of npm start)', () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:8080'],
    ['localhost', 'http://localhost:8080'],
    ['::1', 'http://[::1]:8080'],
    ['fe80::1', 'http://[fe80::1]:8080'],
    ['0.0.0.0', 'http://0.0.0.0:8080'],
    ['::', 'http://[::]:8080'],
    ['192.168.1.20', 'http://192.168.1.20:8080'],
  ])('%s binds, announced as %s', (host, url) => {
    expect(gatewayUrl(host, 8080)).toBe(url);
    expect(() => new URL(url)).not.toThrow();
  });
});
