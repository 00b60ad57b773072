/** A small fetch wrapper for HTTP tests: JSON in, JSON (or text) out, status and headers kept. */
import { request as httpRequest } from 'node:http';

// Tests read answers field by field and assert on them; a loose type keeps them short.
type Json = any;

export interface HttpResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string | undefined;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with `contentType` (default application/json). */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export class HttpClient {
  constructor(private readonly baseUrl: string) {}

  async request<T = Json>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('application/json') && text.length > 0) {
      parsed = JSON.parse(text);
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get<T = Json>(path: string, key?: string): Promise<HttpResponse<T>> {
    return this.request<T>('GET', path, { key });
  }

  post<T = Json>(path: string, key: string | undefined, json?: unknown): Promise<HttpResponse<T>> {
    return this.request<T>('POST', path, { key, json });
  }

  patch<T = Json>(path: string, key: string | undefined, json?: unknown): Promise<HttpResponse<T>> {
    return this.request<T>('PATCH', path, { key, json });
  }

  delete<T = Json>(path: string, key?: string): Promise<HttpResponse<T>> {
    return this.request<T>('DELETE', path, { key });
  }
}

/**
 * Announces a POST body of `bytes` bytes and waits for the answer before sending any of it: the server answers 413
 * from the declared length. (A client that writes the whole body first is covered by test/http-edge.)
 */
export function postOversized(baseUrl: string, path: string, key: string, bytes: number): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': bytes },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        const text = Buffer.concat(chunks).toString('utf8');
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers, body: text.length > 0 ? JSON.parse(text) : text });
      });
    });
    // Once the answer is in, the server's close is the expected end of the exchange; an error before it is not.
    req.on('error', (error) => reject(error));
    req.flushHeaders();
  });
}
