// The registry's public API on the console's own origin, with the key the user entered (session storage only).

const KEY_STORAGE = 'toolhost.apiKey';

export interface FieldProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** A contract error answer: `{error: {code, message, details?}}` with its HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }

  /** The field problems of a 400 (`details.errors`, or `details` itself when it is the list). */
  get problems(): FieldProblem[] {
    const details = this.details as { errors?: unknown } | unknown[] | null | undefined;
    const list = Array.isArray(details) ? details : details?.errors;
    return Array.isArray(list) ? (list as FieldProblem[]).filter((p) => typeof p.path === 'string') : [];
  }
}

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string): void => sessionStorage.setItem(KEY_STORAGE, key),
  clear: (): void => sessionStorage.removeItem(KEY_STORAGE),
};

/** Calls `/v1/...`; resolves with the parsed body (null for 204), rejects with ApiError. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey.get() ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  } catch {
    throw new ApiError(0, 'UNREACHABLE', 'the registry did not answer', null);
  }
  if (response.status === 204) return null as T;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? (text.slice(0, 200) || response.statusText),
      error?.details,
    );
  }
  return parsed as T;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
