/**
 * `toolhost`: the command line for people who keep tools in their own repositories. Commands talk to the public API
 * only (the registry and the gateway, with a tenant key), except `validate`, which runs the registry's checks offline.
 * Errors print the contract's code and message, never a stack trace; the exit code is 1 for a failure, 2 for a usage
 * error.
 */
import { Command, CommanderError } from 'commander';
import { ApiError, type CliTarget } from './api-client';
import { exportTools, generate, importFile, invoke, logs, pull, push, test, type Output } from './commands';
import { FileError } from './manifest';

class UsageError extends Error {}

const io: Output & { err(line: string): void } = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

interface ServerOptions {
  url?: string;
  gatewayUrl?: string;
  key?: string;
}

function targetOf(options: ServerOptions): CliTarget {
  const registryUrl = options.url ?? process.env.TOOLHOST_URL ?? 'http://localhost:3001';
  const key = options.key ?? process.env.TOOLHOST_KEY;
  if (!key) throw new UsageError('a tenant key is needed: --key or TOOLHOST_KEY');
  let gatewayUrl = options.gatewayUrl ?? process.env.TOOLHOST_GATEWAY_URL;
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

/** The options of every command that reaches a server. */
function reachesServer(command: Command): Command {
  return command
    .option('--url <url>', 'registry URL (TOOLHOST_URL; default http://localhost:3001)')
    .option(
      '--gateway-url <url>',
      'gateway URL (TOOLHOST_GATEWAY_URL; default: the registry URL with port 3000 when it is 3001)',
    )
    .option('--key <key>', 'tenant key (TOOLHOST_KEY)');
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * The command tree, on commander (parsing, per-command `--help`, usage errors). Each action sets the exit code it
 * ends with; commander's own errors (an unknown command or option, a missing argument) are usage errors.
 */
function program(exit: { code: number }): Command {
  const root = new Command('toolhost')
    .description('tools in your own repository, synced with a toolhost registry')
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    })
    .showHelpAfterError('run `toolhost --help` for the commands');
  root
    .command('validate')
    .description('check tool manifests (JSON or YAML), TradingGoose files and pi modules offline')
    .argument('<file...>')
    .action(async (files: string[]) => {
      // Loaded only here: the registry's checks (and the sandbox's parser) take a while to load.
      exit.code = (await import('./validate')).validate(files, io) ? 0 : 1;
    });
  reachesServer(root.command('push'))
    .description('create or update tools from manifests (by name, via toolhost.lock.json)')
    .argument('<file|dir>')
    .action(async (path: string, options: ServerOptions) => {
      await push(targetOf(options), path, io);
    });
  reachesServer(root.command('pull'))
    .description('write the tenant’s tools (or one) as manifests')
    .argument('[tool]')
    .option('--dir <dir>', 'where to write them', '.')
    .option('--yaml', 'write YAML manifests')
    .action(async (tool: string | undefined, options: ServerOptions & { dir: string; yaml?: boolean }) => {
      await pull(targetOf(options), options.dir, tool, options.yaml === true, io);
    });
  reachesServer(root.command('import'))
    .description('import a TradingGoose file, a pi module or a manifest')
    .argument('<file>')
    .action(async (file: string, options: ServerOptions) => {
      await importFile(targetOf(options), file, io);
    });
  reachesServer(root.command('export'))
    .description('print the tenant’s tools (or those named) as a TradingGoose file')
    .argument('[tool...]')
    .option('--yaml', 'print YAML')
    .action(async (tools: string[], options: ServerOptions & { yaml?: boolean }) => {
      await exportTools(targetOf(options), tools, options.yaml === true, io);
    });
  reachesServer(root.command('invoke'))
    .description('invoke a tool and print the Invocation')
    .argument('<tool>')
    .option('--input <json>', 'the input, as JSON', '{}')
    .action(async (tool: string, options: ServerOptions & { input: string }) => {
      exit.code = (await invoke(targetOf(options), tool, jsonOption(options.input, 'input'), io)) ? 0 : 1;
    });
  reachesServer(root.command('test'))
    .description('dry-run a tool (counted nowhere); without --input, run its fixtures')
    .argument('<tool>')
    .option('--input <json>', 'the input, as JSON')
    .option('--version <n>', 'the version to run (default: the current one)')
    .action(async (tool: string, options: ServerOptions & { input?: string; version?: string }) => {
      const input = options.input === undefined ? undefined : jsonOption(options.input, 'input');
      const passed = await test(targetOf(options), tool, input, integerOption(options.version, 'version'), io);
      exit.code = passed ? 0 : 1;
    });
  reachesServer(root.command('generate'))
    .description(
      'draft a tool with the server’s language model: the manifest on stdout (or --out, .yaml for YAML), the checks on stderr',
    )
    .argument('<description>', 'what the tool does, in plain language (quoted)')
    .option('--out <file>', 'write the manifest here')
    .option('--example <json>', 'an example {"input": {…}, "output": …}; repeatable', collect, [])
    .action(async (description: string, options: ServerOptions & { out?: string; example: string[] }) => {
      const examples = options.example.map((example) => jsonOption(example, 'example'));
      exit.code = (await generate(targetOf(options), description, examples, options.out, io)) ? 0 : 1;
    });
  reachesServer(root.command('logs'))
    .description('print the tool’s audit log, newest first')
    .argument('<tool>')
    .option('--limit <n>', 'how many entries', '50')
    .action(async (tool: string, options: ServerOptions & { limit: string }) => {
      await logs(targetOf(options), tool, integerOption(options.limit, 'limit') ?? 50, io);
    });
  reachesServer(root.command('mcp'))
    .description('an MCP server on stdio that forwards to the gateway')
    .action(async (options: ServerOptions) => {
      await (await import('./mcp-bridge')).serveMcp(targetOf(options));
    });
  return root;
}

/** Runs one command line; resolves to the exit code (0, 1 for a failure, 2 for a usage error). */
export async function run(argv: string[]): Promise<number> {
  const exit = { code: 0 };
  try {
    await program(exit).parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help asked for (`--help`, `help <command>`) is a success; help shown because something was missing is not.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
    if (error.code === 'commander.help' && error.exitCode === 0) return 0;
    return 2;
  }
  return exit.code;
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
  const usage = error instanceof UsageError;
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
