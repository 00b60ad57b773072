/** One open `GET /mcp` stream: the tenant whose key opened it, and how to tell it or end it. */
export interface McpStream {
  tenantId: string;
  /** Sends `notifications/tools/list_changed` on the stream. */
  toolsChanged(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The server-to-client streams this gateway holds open, by tenant. A tool change reaches every gateway (Redis
 * pub/sub), and each tells the streams it holds of that tenant: the client is on whichever gateway its GET landed,
 * and no session state is needed anywhere.
 */
export class McpStreams {
  private readonly byTenant = new Map<string, Set<McpStream>>();

  constructor(
    private readonly onError: (error: unknown) => void = () => undefined,
    /** Told the number of open streams whenever it changes (a gauge). */
    private readonly onSize: (size: number) => void = () => undefined,
  ) {}

  /** Holds `stream` until the returned function is called (when its connection closes). */
  add(stream: McpStream): () => void {
    let streams = this.byTenant.get(stream.tenantId);
    if (!streams) {
      streams = new Set();
      this.byTenant.set(stream.tenantId, streams);
    }
    streams.add(stream);
    this.onSize(this.size);
    return () => {
      const held = this.byTenant.get(stream.tenantId);
      if (!held?.delete(stream)) return;
      if (held.size === 0) this.byTenant.delete(stream.tenantId);
      this.onSize(this.size);
    };
  }

  /** A tool of `tenantId` was created, changed, disabled, enabled or deleted. */
  toolsChanged(tenantId: string): void {
    for (const stream of this.byTenant.get(tenantId) ?? []) stream.toolsChanged().catch(this.onError);
  }

  /** Changes may have been missed (the subscriber reconnected): every stream is told to list again. */
  anyToolsChanged(): void {
    for (const tenantId of this.byTenant.keys()) this.toolsChanged(tenantId);
  }

  /** Ends every stream (shutdown): clients reconnect, to another gateway once this one is out of rotation. */
  async closeAll(): Promise<void> {
    const streams = [...this.byTenant.values()].flatMap((held) => [...held]);
    this.byTenant.clear();
    this.onSize(0);
    await Promise.all(streams.map((stream) => stream.close().catch(this.onError)));
  }

  get size(): number {
    let size = 0;
    for (const held of this.byTenant.values()) size += held.size;
    return size;
  }
}
