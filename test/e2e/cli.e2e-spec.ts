/**
 * The `toolhost` CLI (issue 23) as a child process against the real stack: every command, its exit codes, and errors
 * printed as the contract's code and message; `mcp` driven by the MCP SDK's stdio client.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { projectRoot } from '../../scripts/project-root';
import { Stack } from './stack';

const root = projectRoot(__dirname);
const BIN = join(root, 'bin', 'toolhost.js');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const slug = {
  name: 'slug',
  title: 'Slug Generator',
  description: 'Makes a URL slug of a title',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  code: "return input.title.toLowerCase().replace(/[^a-z0-9]+/g, '-');",
};

describe('toolhost CLI (e2e)', () => {
  let stack: Stack;
  let key: string;
  let dir: string;

  const cli = (args: string[], env: Record<string, string> = {}): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH ?? '',
            TOOLHOST_URL: stack.registryUrl,
            TOOLHOST_GATEWAY_URL: stack.gatewayUrl,
            TOOLHOST_KEY: key,
            ...env,
          },
        },
        (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });
  const write = (name: string, value: unknown): string => {
    const file = join(dir, name);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    return file;
  };

  beforeAll(async () => {
    stack = await new Stack().start();
    ({ key } = await stack.tenant('cli'));
    dir = mkdtempSync(join(tmpdir(), 'toolhost-cli-'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
  }, 60_000);

  it('validate checks manifests, TradingGoose files and pi modules offline', async () => {
    const good = write('slug.json', slug);
    const bad = write('bad.txt.json', {
      name: 'bad',
      title: 'Bad',
      description: 'd',
      inputSchema: { type: 'array' },
      code: 'return (',
    });
    const goose = write('goose.json', {
      fileType: 'tradingGooseExport',
      customTools: [
        {
          title: 'Ok',
          schema: { type: 'function', function: { description: 'd', parameters: { type: 'object' } } },
          code: 'return 1;',
        },
      ],
    });
    const pi = write('ext.js', "export default function (pi) { pi.registerTool({ name: 'x', execute() {} }); }");
    const passed = await cli(['validate', good, goose, pi], { TOOLHOST_URL: 'http://127.0.0.1:1' });
    expect(passed.code).toBe(0);
    expect(passed.stdout.split('\n').filter((line) => line.startsWith('ok '))).toHaveLength(3);
    const failed = await cli(['validate', good, bad]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/FAIL .*bad\.txt\.json.*\/inputSchema/);
    expect(failed.stdout).toMatch(/FAIL .*\/code .*syntax error/);
  });

  it('push creates, then changes nothing, then updates only what changed; pull writes manifests back', async () => {
    const file = write('slug.json', slug);
    const created = await cli(['push', file]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created slug: custom_[0-9a-f-]{36} version 1$/m);
    const id = JSON.parse(readFileSync(join(dir, 'toolhost.lock.json'), 'utf8'))[stack.registryUrl].slug as string;

    expect((await cli(['push', file])).stdout).toMatch(/^unchanged slug: .* version 1$/m);
    write('slug.json', { ...slug, timeoutMs: 2000 });
    expect((await cli(['push', dir])).stdout).toMatch(/^updated slug: .* version 2 \(timeoutMs\)$/m);
    expect((await stack.registry('GET', `/v1/tools/${id}`, key)).body).toMatchObject({ version: 2, timeoutMs: 2000 });

    const pulled = join(dir, 'pulled');
    require('node:fs').mkdirSync(pulled);
    const pull = await cli(['pull', `custom_${id}`, '--dir', pulled]);
    expect(pull.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(pulled, 'slug-generator.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'slug-generator',
      title: 'Slug Generator',
      code: slug.code,
      timeoutMs: 2000,
    });
  });

  it('invoke, test and logs; errors print the contract code with a non-zero exit', async () => {
    const tool = await stack.createTool(key, { ...slug, name: undefined, title: 'Slugger' });
    const invoked = await cli(['invoke', tool.toolName, '--input', '{"title":"Hello World"}']);
    expect(invoked.code).toBe(0);
    expect(JSON.parse(invoked.stdout)).toMatchObject({ status: 'succeeded', result: 'hello-world' });

    const tested = await cli(['test', tool.id, '--input', '{"title":"A B"}']);
    expect([tested.code, JSON.parse(tested.stdout).result]).toEqual([0, 'a-b']);
    const failedRun = await cli(['invoke', tool.toolName, '--input', '{"title":5}']);
    expect(failedRun.code).toBe(1);
    expect(failedRun.stderr).toMatch(/^VALIDATION_FAILED: /);

    const audit = await Stack.until(
      () => cli(['logs', tool.toolName]),
      (ran) => ran.stdout.includes('tool.tested'),
    );
    expect(audit.stdout).toMatch(/tool\.created/);

    const unauthorized = await cli(['invoke', tool.toolName], { TOOLHOST_KEY: 'thk_not-a-key-at-all' });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/^UNAUTHORIZED: /);
    expect(unauthorized.stderr).not.toMatch(/\n\s+at /);
    const usage = await cli(['invoke']);
    expect(usage.code).toBe(2);
    expect((await cli(['invoke', '--help'])).stdout).toMatch(/^usage: toolhost invoke <tool>/);
  });

  it('import and export a TradingGoose file', async () => {
    const file = write('goose-in.json', {
      version: '2',
      fileType: 'tradingGooseExport',
      customTools: [
        {
          title: 'Doubler',
          schema: {
            type: 'function',
            function: {
              name: 'double',
              description: 'Doubles',
              parameters: { type: 'object', properties: { n: { type: 'number' } } },
            },
          },
          code: 'return <n> * 2;',
        },
      ],
    });
    const imported = await cli(['import', file]);
    expect(imported.code).toBe(0);
    const id = JSON.parse(imported.stdout).imported[0].id as string;
    const exported = await cli(['export', id]);
    expect(JSON.parse(exported.stdout).customTools).toEqual([
      expect.objectContaining({ title: 'Doubler', code: 'return <n> * 2;' }),
    ]);
  });

  it('mcp serves the tenant’s tools on stdio, forwarding to the gateway', async () => {
    const tool = await stack.createTool(key, { ...slug, name: undefined, title: 'Slug over stdio' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: {
        PATH: process.env.PATH ?? '',
        TOOLHOST_URL: stack.registryUrl,
        TOOLHOST_GATEWAY_URL: stack.gatewayUrl,
        TOOLHOST_KEY: key,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'cli-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain(tool.toolName);
      const called = await client.callTool({ name: tool.toolName, arguments: { title: 'Over Stdio' } });
      expect(called.isError).not.toBe(true);
      expect(called.content).toEqual([{ type: 'text', text: 'over-stdio' }]);
    } finally {
      await client.close();
    }
  });
});
