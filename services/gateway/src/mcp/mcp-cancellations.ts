import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** A `notifications/cancelled` as the gateways pass it to each other. */
export interface McpCancelMessage {
  sessionId: string;
  requestId: RequestId;
  keyId: string;
}

/** How a cancellation reaches the other gateways (a Redis channel they all subscribe to). */
export interface McpCancelFanOut {
  publish(message: string): Promise<void>;
}

function parseCancel(raw: string): McpCancelMessage | undefined {
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    if (!('sessionId' in value) || typeof value.sessionId !== 'string') return undefined;
    if (!('keyId' in value) || typeof value.keyId !== 'string') return undefined;
    if (!('requestId' in value)) return undefined;
    const { requestId } = value;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return undefined;
    return { sessionId: value.sessionId, keyId: value.keyId, requestId };
  } catch {
    return undefined;
  }
}

/**
 * The `tools/call` requests this gateway is serving, by (MCP session id, JSON-RPC request id), so that a
 * `notifications/cancelled` ends them. The server is stateless: the cancellation is a POST of its own, which the SDK
 * hands to a fresh server that never saw the call, and which a load balancer may send to another gateway. So it
 * is looked up here, and when the call is not here, published to every gateway (`handleMessage`). Request ids
 * repeat across clients; the session id (random, given out at `initialize`) tells them apart, and only the key that
 * made a call can cancel it.
 */
export class McpCancellations {
  private readonly calls = new Map<string, { keyId: string; cancel: () => void }>();

  constructor(
    private readonly fanOut: McpCancelFanOut,
    private readonly onUnsent: (error: unknown) => void = () => undefined,
  ) {}

  /** Registers a call being served; the returned function forgets it (call it when the call ends). */
  track(sessionId: string, requestId: RequestId, keyId: string, cancel: () => void): () => void {
    const id = McpCancellations.idOf(sessionId, requestId);
    const entry = { keyId, cancel };
    this.calls.set(id, entry);
    return () => {
      if (this.calls.get(id) === entry) this.calls.delete(id);
    };
  }

  /** A client cancelled: ends the call here, or asks the other gateways to. */
  cancel(message: McpCancelMessage): void {
    if (this.cancelHere(message)) return;
    this.fanOut.publish(JSON.stringify(message)).catch(this.onUnsent);
  }

  /** A cancellation another gateway published. */
  handleMessage(raw: string): void {
    const message = parseCancel(raw);
    if (message) this.cancelHere(message);
  }

  get size(): number {
    return this.calls.size;
  }

  private cancelHere(message: McpCancelMessage): boolean {
    const id = McpCancellations.idOf(message.sessionId, message.requestId);
    const entry = this.calls.get(id);
    if (!entry || entry.keyId !== message.keyId) return false;
    this.calls.delete(id);
    entry.cancel();
    return true;
  }

  /** `1` and `"1"` are different JSON-RPC ids. */
  private static idOf(sessionId: string, requestId: RequestId): string {
    return JSON.stringify([sessionId, requestId]);
  }
}
