import { connect } from 'node:net';

/**
 * HTTP/1.1 over a bare socket, for requests `fetch` and `node:http` refuse to send: any method and
 * request target (raw bytes, invalid percent-encoding, absolute-form), repeated or non-ASCII
 * headers, a missing Host, bodies that do not match their headers. One connection per request
 * (`Connection: close`), so a request the server refuses cannot disturb the next one.
 */
export interface RawRequest {
  readonly method: string;
  /** The request target exactly as sent: path and query, or anything else. */
  readonly target: string | Buffer;
  /** Sent in order, repeats kept. Host and Connection are added unless `omitHost`. */
  readonly headers?: readonly (readonly [string, string | Buffer])[];
  /** Content-Length is added for it unless a header sets Content-Length or Transfer-Encoding. */
  readonly body?: string | Buffer;
  readonly omitHost?: boolean;
  /** `HTTP/1.1` unless told. */
  readonly version?: string;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-cased names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

export function encodeRequest(host: string, request: RawRequest): Buffer {
  const headers = [...(request.headers ?? [])];
  const named = (name: string) => headers.some(([key]) => key.toLowerCase() === name);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  if (!request.omitHost && !named('host')) headers.unshift(['Host', host]);
  if (body && !named('content-length') && !named('transfer-encoding')) {
    headers.push(['Content-Length', String(body.length)]);
  }
  if (!named('connection')) headers.push(['Connection', 'close']);
  const parts: Buffer[] = [
    Buffer.from(`${request.method} `, 'latin1'),
    Buffer.from(request.target),
    Buffer.from(` ${request.version ?? 'HTTP/1.1'}\r\n`, 'latin1'),
  ];
  for (const [name, value] of headers)
    parts.push(Buffer.from(`${name}: `), Buffer.from(value), Buffer.from('\r\n'));
  parts.push(Buffer.from('\r\n'));
  if (body) parts.push(body);
  return Buffer.concat(parts);
}

/**
 * Sends `request` to `baseUrl` (`http://host:port`) and resolves with the final answer (interim 1xx
 * answers skipped). Rejects when the server closes without answering or after `timeoutMs`.
 */
export function sendRaw(baseUrl: string, request: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const bytes = encodeRequest(url.host, request);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', finish);
    // The server may answer and close before it read everything (a header or body over its limit):
    // the write then fails, but the answer already arrived.
    socket.on('error', (error) => {
      if (chunks.length > 0) finish();
      else {
        clearTimeout(timer);
        reject(error);
      }
    });
    // Write without ending: Node's server drops the answer of a client that half-closes first
    // (httpAllowHalfOpen is off). `Connection: close` makes the server close once it answered.
    socket.on('connect', () => socket.write(bytes));
  });
}

function parseResponse(bytes: Buffer): RawResponse {
  let rest = bytes;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0)
      throw new Error(`no HTTP answer: ${JSON.stringify(rest.toString('latin1').slice(0, 200))}`);
    const [statusLine, ...headerLines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
    rest = rest.subarray(headEnd + 4);
    if (status >= 100 && status < 200) continue;
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const body = headers['transfer-encoding']?.includes('chunked')
      ? dechunk(rest)
      : headers['content-length'] !== undefined
        ? rest.subarray(0, Number(headers['content-length']))
        : rest;
    return { status, headers, text: body.toString('utf8') };
  }
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
