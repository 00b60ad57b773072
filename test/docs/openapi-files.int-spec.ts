/**
 * The API reference in the repository (`docs/openapi/*.json`) is what the services serve: the built
 * `scripts/write-openapi.ts` regenerates both documents in its own process (NestJS 12 is ESM, out of jest's reach)
 * and compares them with the files. When this fails, run `npm run docs:openapi` and commit what it writes.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../scripts/project-root';

const root = projectRoot(__dirname);
const SCRIPT = join(root, 'dist', 'scripts', 'write-openapi.js');

function runScript(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--no-node-snapshot', SCRIPT, ...args],
      { cwd: root, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('docs/openapi', () => {
  it('holds the documents the gateway and the registry serve (else: run `npm run docs:openapi`)', async () => {
    const checked = await runScript(['--check']);
    // The script's own message names the stale file, what differs, and the command that refreshes it.
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  });

  it('is the live reference: the gateway document has the Idempotency-Key header, the registry its tool routes', async () => {
    const gateway = JSON.parse(await readFile(join(root, 'docs', 'openapi', 'gateway.json'), 'utf8'));
    const registry = JSON.parse(await readFile(join(root, 'docs', 'openapi', 'registry.json'), 'utf8'));
    expect(gateway.paths['/v1/invocations'].post.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }),
    );
    expect(gateway.components.schemas.Error.properties.error.properties.code.enum).toContain('IDEMPOTENCY_KEY_REUSED');
    expect(Object.keys(registry.paths)).toEqual(expect.arrayContaining(['/v1/tools', '/v1/tools/{id}/audit']));
  });

  it('fails a stale copy, naming the file, what differs and the command to run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolhost-openapi-'));
    try {
      await copyFile(join(root, 'docs', 'openapi', 'registry.json'), join(dir, 'registry.json'));
      const gateway = JSON.parse(await readFile(join(root, 'docs', 'openapi', 'gateway.json'), 'utf8'));
      delete gateway.paths['/v1/invocations/{id}'];
      await writeFile(join(dir, 'gateway.json'), JSON.stringify(gateway, null, 2));
      const checked = await runScript(['--check', '--dir', dir]);
      expect(checked.code).toBe(1);
      expect(checked.stderr).toContain('gateway.json is not the document the gateway serves');
      expect(checked.stderr).toContain('paths./v1/invocations/{id} (not in the file)');
      expect(checked.stderr).toContain('npm run docs:openapi');
      expect(checked.stderr).not.toContain('registry.json');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
