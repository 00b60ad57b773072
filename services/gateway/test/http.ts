/** Answers are read field by field in assertions; a loose type keeps the tests short. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

/** One HTTP request against a running service; JSON in and out. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; json?: unknown; raw?: string; contentType?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.raw !== undefined || options.json !== undefined) {
    body = options.raw ?? JSON.stringify(options.json);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    // not JSON: keep the text
  }
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- tests read answers loosely (see Json)
  return { status: response.status, headers: response.headers, body: parsed as Json };
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(probe: () => Promise<T | undefined>, deadlineMs = 10_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
