import { McpStreams, type McpStream } from './mcp-streams';

function stream(tenantId: string, log: string[]): McpStream {
  return {
    tenantId,
    toolsChanged: () => {
      log.push(`changed ${tenantId}`);
      return Promise.resolve();
    },
    close: () => {
      log.push(`closed ${tenantId}`);
      return Promise.resolve();
    },
  };
}

describe('McpStreams', () => {
  it("tells a tenant's streams of its tool changes, and no other tenant's", () => {
    const log: string[] = [];
    const streams = new McpStreams();
    streams.add(stream('a', log));
    streams.add(stream('a', log));
    streams.add(stream('b', log));
    streams.toolsChanged('a');
    expect(log).toEqual(['changed a', 'changed a']);
    streams.toolsChanged('nobody');
    expect(log).toHaveLength(2);
  });

  it('forgets a stream once released, and counts what is open', () => {
    const log: string[] = [];
    const sizes: number[] = [];
    const streams = new McpStreams(undefined, (size) => sizes.push(size));
    const release = streams.add(stream('a', log));
    streams.add(stream('b', log));
    release();
    release();
    streams.toolsChanged('a');
    expect(log).toEqual([]);
    expect(streams.size).toBe(1);
    expect(sizes).toEqual([1, 2, 1]);
  });

  it('tells every stream after a reconnect, and closes them all on shutdown', async () => {
    const log: string[] = [];
    const errors: unknown[] = [];
    const streams = new McpStreams((error) => errors.push(error));
    streams.add(stream('a', log));
    streams.add({ ...stream('b', log), toolsChanged: () => Promise.reject(new Error('gone')) });
    streams.anyToolsChanged();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['changed a']);
    expect(errors).toEqual([new Error('gone')]);
    await streams.closeAll();
    expect(log).toEqual(['changed a', 'closed a', 'closed b']);
    expect(streams.size).toBe(0);
  });
});
