/**
 * HTTP/1.1 over a bare socket, for requests an ordinary client would not send or would send differently: paths that
 * are not valid percent-encoding (fetch normalises URLs), and a whole body written before the answer is read, as a
 * simple client does (which meets a reset when the server closes while it is still writing).
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body parsed as JSON when it is JSON, else the text. */
  body: any;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Body bytes to send (all of them, 64 KiB at a time), filled with spaces. */
  bodyBytes?: number;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

function parseResponse(raw: Buffer): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const bodyBuffer = raw.subarray(end + 4);
  if (bodyBuffer.length < length) return undefined;
  const text = bodyBuffer.subarray(0, length).toString('utf8');
  const body: unknown = (headers['content-type'] ?? '').includes('application/json') ? JSON.parse(text) : text;
  return { status: Number(statusLine?.split(' ')[1]), headers, body };
}

/**
 * Sends the request head and then every body byte, and only then reads the answer; rejects when the connection
 * fails before the whole answer was read.
 */
export function rawRequest(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    let settled = false;
    const finish = (outcome: RawResponse | Error): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const startReading = (): void => {
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk);
        const response = parseResponse(Buffer.concat(received));
        if (response) finish(response);
      });
      socket.on('end', () => finish(new Error('connection ended before the whole answer')));
      socket.resume();
    };
    socket.on('error', (error) => finish(new Error(`connection failed before the answer was read: ${error.message}`)));
    socket.pause();
    socket.on('connect', () => {
      const headers: Record<string, string> = { host: url.host, ...request.headers };
      if (request.bodyBytes !== undefined) headers['content-length'] = String(request.bodyBytes);
      const head = [
        `${request.method} ${request.path} HTTP/1.1`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${head.join('\r\n')}\r\n\r\n`, 'latin1');
      let left = request.bodyBytes ?? 0;
      const write = (): void => {
        while (left > 0) {
          const n = Math.min(CHUNK.length, left);
          left -= n;
          if (left === 0) {
            socket.write(CHUNK.subarray(0, n), () => startReading());
            return;
          }
          if (!socket.write(CHUNK.subarray(0, n))) {
            socket.once('drain', write);
            return;
          }
        }
        startReading();
      };
      write();
    });
  });
}
