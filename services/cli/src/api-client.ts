/** The public HTTP API as the CLI uses it: the registry and the gateway, with the tenant's key. */

export interface CliTarget {
  /** The registry's base URL (tools, versions, audit, import, export). */
  registryUrl: string;
  /** The gateway's base URL (invocations, dry runs, MCP). */
  gatewayUrl: string;
  key: string;
}

/** An answer of the API that is not a success: its contract code and message, as the CLI prints them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** One request; an answer of 400 or more becomes an ApiError with the contract's code, a network failure UNAVAILABLE. */
export async function request(
  target: CliTarget,
  service: 'registry' | 'gateway',
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const base = service === 'registry' ? target.registryUrl : target.gatewayUrl;
  let response: Response;
  try {
    response = await fetch(new URL(path, base), {
      method,
      headers: {
        authorization: `Bearer ${target.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new ApiError(0, 'UNAVAILABLE', `${base} cannot be reached (${why})`);
  }
  const text = await response.text();
  let parsed: unknown = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (response.status >= 400) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? (typeof parsed === 'string' ? parsed.slice(0, 200) : response.statusText),
      error?.details,
    );
  }
  return { status: response.status, body: parsed };
}
