/**
 * `toolhost`: the command line for people who keep tools in their own repositories. Commands talk to the public API
 * only (the registry and the gateway, with a tenant key), except `validate`, which runs the registry's checks offline.
 * Errors print the contract's code and message, never a stack trace; the exit code is 1 for a failure, 2 for a usage
 * error.
 */
import { parseArgs } from 'node:util';
import { ApiError, type CliTarget } from './api-client';
import { exportTools, generate, importFile, invoke, logs, pull, push, test, type Output } from './commands';
import { FileError } from './manifest';

const HELP: Record<string, string> = {
  validate:
    'validate <file...>          check tool manifests (JSON or YAML), TradingGoose files and pi modules offline',
  push: 'push <file|dir>             create or update tools from manifests (by name, via toolhost.lock.json)',
  pull: 'pull [tool] [--dir <dir>] [--yaml]  write the tenant’s tools (or one) as manifests',
  import: 'import <file>               import a TradingGoose file, a pi module or a manifest',
  export: 'export [tool...] [--yaml]   print the tenant’s tools (or those named) as a TradingGoose file',
  invoke: "invoke <tool> [--input '{…}'] invoke a tool and print the Invocation",
  test: "test <tool> [--input '{…}'] [--version <n>]  dry-run a tool (counted nowhere); no --input runs its fixtures",
  generate:
    'generate "<description>" [--out <file>] [--example \'{"input":{…},"output":…}\']…  draft a tool with the ' +
    'server’s language model: the manifest on stdout (or --out, .yaml for YAML), the checks on stderr',
  logs: 'logs <tool> [--limit <n>]    print the tool’s audit log, newest first',
  mcp: 'mcp                         an MCP server on stdio that forwards to the gateway',
};

const USAGE = `usage: toolhost <command> [options]

commands:
${Object.values(HELP)
  .map((line) => `  ${line}`)
  .join('\n')}

options for commands that reach a server:
  --url <url>          registry URL (TOOLHOST_URL; default http://localhost:3001)
  --gateway-url <url>  gateway URL (TOOLHOST_GATEWAY_URL; default: the registry URL with port 3000 when it is 3001)
  --key <key>          tenant key (TOOLHOST_KEY)
  -h, --help           this help, or a command's with \`toolhost <command> --help\``;

class UsageError extends Error {}

const io: Output & { err(line: string): void } = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

function targetOf(values: { url?: string; 'gateway-url'?: string; key?: string }): CliTarget {
  const registryUrl = values.url ?? process.env.TOOLHOST_URL ?? 'http://localhost:3001';
  const key = values.key ?? process.env.TOOLHOST_KEY;
  if (!key) throw new UsageError('a tenant key is needed: --key or TOOLHOST_KEY');
  let gatewayUrl = values['gateway-url'] ?? process.env.TOOLHOST_GATEWAY_URL;
  if (!gatewayUrl) {
    const url = new URL(registryUrl);
    if (url.port === '3001') url.port = '3000';
    gatewayUrl = url.toString();
  }
  return { registryUrl, gatewayUrl, key };
}

function jsonOption(text: string | undefined, name: string): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--${name} is not JSON`);
  }
}

function integerOption(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a whole number`);
  return Number(text);
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: 'string' },
      'gateway-url': { type: 'string' },
      key: { type: 'string' },
      input: { type: 'string' },
      version: { type: 'string' },
      dir: { type: 'string' },
      limit: { type: 'string' },
      out: { type: 'string' },
      example: { type: 'string', multiple: true },
      yaml: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  const help = HELP[command];
  if (help === undefined) throw new UsageError(`unknown command "${command}"`);
  if (values.help) {
    io.out(`usage: toolhost ${help}`);
    return 0;
  }
  const one = (what: string): string => {
    const [value] = positionals;
    if (value === undefined || positionals.length > 1) throw new UsageError(`${command} takes one ${what}`);
    return value;
  };
  switch (command) {
    case 'validate':
      if (positionals.length === 0) throw new UsageError('validate takes one or more files');
      // Loaded only here: the registry's checks (and the sandbox's parser) take a while to load.
      return (await import('./validate')).validate(positionals, io) ? 0 : 1;
    case 'push':
      await push(targetOf(values), one('file or directory'), io);
      return 0;
    case 'pull':
      if (positionals.length > 1) throw new UsageError('pull takes at most one tool');
      await pull(targetOf(values), values.dir ?? '.', positionals[0], values.yaml === true, io);
      return 0;
    case 'import':
      await importFile(targetOf(values), one('file'), io);
      return 0;
    case 'export':
      await exportTools(targetOf(values), positionals, values.yaml === true, io);
      return 0;
    case 'invoke':
      return (await invoke(targetOf(values), one('tool'), jsonOption(values.input, 'input'), io)) ? 0 : 1;
    case 'test':
      return (await test(
        targetOf(values),
        one('tool'),
        values.input === undefined ? undefined : jsonOption(values.input, 'input'),
        integerOption(values.version, 'version'),
        io,
      ))
        ? 0
        : 1;
    case 'generate':
      return (await generate(
        targetOf(values),
        one('description (quoted)'),
        (values.example ?? []).map((example) => jsonOption(example, 'example')),
        values.out,
        io,
      ))
        ? 0
        : 1;
    case 'logs':
      await logs(targetOf(values), one('tool'), integerOption(values.limit, 'limit') ?? 50, io);
      return 0;
    case 'mcp':
      await (await import('./mcp-bridge')).serveMcp(targetOf(values));
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function report(error: unknown): number {
  if (error instanceof ApiError) {
    process.stderr.write(`${error.code}: ${error.message}\n`);
    const problems = (error.details as { errors?: { path: string; message: string }[] } | undefined)?.errors;
    for (const problem of problems ?? []) process.stderr.write(`  ${problem.path || '/'} ${problem.message}\n`);
    return 1;
  }
  if (error instanceof FileError) {
    process.stderr.write(`BAD_REQUEST: ${error.message}\n`);
    return 1;
  }
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`${usage ? 'usage' : 'error'}: ${(error as Error).message}\n`);
  if (usage) process.stderr.write('run `toolhost --help` for the commands\n');
  return usage ? 2 : 1;
}

/** Runs the command line and sets the process's exit code. */
export async function main(argv: string[]): Promise<void> {
  try {
    process.exitCode = await run(argv);
  } catch (error) {
    process.exitCode = report(error);
  }
}

if (require.main === module) void main(process.argv.slice(2));
