import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root (the folder holding nest-cli.json), from a source file or its compiled copy in dist/. */
export function projectRoot(start: string = __dirname): string {
  let dir = start;
  while (!existsSync(join(dir, 'nest-cli.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no nest-cli.json above ${start}`);
    dir = parent;
  }
  return dir;
}
