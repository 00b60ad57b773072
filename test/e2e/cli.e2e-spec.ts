/**
 * The `toolhost` CLI (issue 23) as a child process against the real stack: every command, its exit codes, and errors
 * printed as the contract's code and message; `mcp` driven by the MCP SDK's stdio client.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../../scripts/project-root';
import { CAGR_DESCRIPTION, CAGR_DRAFT } from '../support/cagr-draft';
import { ChatCompletionsServer } from '../support/chat-completions-server';
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
  const model = new ChatCompletionsServer();

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
    const modelUrl = await model.start();
    stack = await new Stack({
      env: { LLM_BASE_URL: modelUrl, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model' },
    }).start();
    ({ key } = await stack.tenant('cli'));
    dir = mkdtempSync(join(tmpdir(), 'toolhost-cli-'));
  }, 120_000);

  afterAll(async () => {
    // Set by a before hook that may have failed before assigning it: close only what started.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    await stack?.stop();
    await model.stop();
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
    // A repository of its own: push takes every manifest of a directory (the other tests' files are not manifests).
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    const file = join(repo, 'slug.json');
    writeFileSync(file, JSON.stringify(slug));
    const created = await cli(['push', file]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created slug: custom_[0-9a-f-]{36} version 1$/m);
    const id = JSON.parse(readFileSync(join(repo, 'toolhost.lock.json'), 'utf8'))[stack.registryUrl].slug as string;

    expect((await cli(['push', file])).stdout).toMatch(/^unchanged slug: .* version 1$/m);
    writeFileSync(file, JSON.stringify({ ...slug, timeoutMs: 2000 }));
    expect((await cli(['push', repo])).stdout).toMatch(/^updated slug: .* version 2 \(timeoutMs\)$/m);
    expect((await stack.registry('GET', `/v1/tools/${id}`, key)).body).toMatchObject({ version: 2, timeoutMs: 2000 });

    const pulled = join(dir, 'pulled');
    mkdirSync(pulled);
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
    expect((await cli(['invoke', '--help'])).stdout).toMatch(/^Usage: toolhost invoke \[options\] <tool>/);
  });

  it('generate writes a checked draft as a YAML manifest; push takes YAML; test runs its fixtures', async () => {
    model.script({ content: JSON.stringify(CAGR_DRAFT) });
    const repo = join(dir, 'generated');
    mkdirSync(repo);
    const out = join(repo, 'cagr.yaml');
    const generated = await cli(['generate', CAGR_DESCRIPTION, '--out', out]);
    expect(generated.code).toBe(0);
    expect(generated.stderr).toMatch(/^pass schema$/m);
    expect(generated.stderr).toMatch(/^pass code \(handle\)$/m);
    expect(generated.stderr.match(/^pass example /gm)).toHaveLength(2);
    const manifest = parseYaml(readFileSync(out, 'utf8'));
    expect(manifest).toMatchObject({ name: 'cagr-calculator', title: 'CAGR Calculator', code: CAGR_DRAFT.code });
    expect(manifest.fixtures).toHaveLength(2);
    expect(readFileSync(out, 'utf8')).toContain('code: |');

    expect((await cli(['validate', out])).code).toBe(0);
    const pushed = await cli(['push', repo]);
    expect(pushed.stdout).toMatch(/^created cagr-calculator: custom_[0-9a-f-]{36} version 1$/m);
    const id = JSON.parse(readFileSync(join(repo, 'toolhost.lock.json'), 'utf8'))[stack.registryUrl][
      'cagr-calculator'
    ] as string;
    const tested = await cli(['test', id]);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toBe('pass example 1\npass example 2\n');

    // A draft whose example fails: still written, the failure on stderr, exit 1.
    const wrong = { ...CAGR_DRAFT, examples: [{ input: CAGR_DRAFT.examples[0]?.input, output: { cagr: 9 } }] };
    model.script({ content: JSON.stringify(wrong) }, { content: JSON.stringify(wrong) });
    const failing = await cli([
      'generate',
      CAGR_DESCRIPTION,
      '--example',
      '{"input":{"startValue":1,"endValue":2,"years":1}}',
    ]);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/^FAIL example /m);
    expect(JSON.parse(failing.stdout)).toMatchObject({ title: 'CAGR Calculator' });
    expect(model.requests.at(-2)?.messages[1]?.content).toContain('"startValue": 1');
    expect((await cli(['generate', '--help'])).stdout).toMatch(/^Usage: toolhost generate \[options\] <description>/);
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
