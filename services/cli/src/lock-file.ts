import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { FileError } from './manifest';

/**
 * `toolhost.lock.json`: which tool id each manifest name became on each registry, kept beside the manifests and
 * committed with them, so `push` updates the same tool every time instead of creating another.
 */
export class LockFile {
  private readonly entries: Record<string, Record<string, string>>;

  constructor(private readonly path: string) {
    if (!existsSync(path)) {
      this.entries = {};
      return;
    }
    try {
      this.entries = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, string>>;
    } catch {
      throw new FileError(`${path} is not a toolhost lock file (JSON)`);
    }
  }

  idOf(registry: string, name: string): string | undefined {
    return this.entries[registry]?.[name];
  }

  set(registry: string, name: string, id: string): void {
    this.entries[registry] = { ...this.entries[registry], [name]: id };
    writeFileSync(this.path, `${JSON.stringify(this.entries, null, 2)}\n`);
  }
}
