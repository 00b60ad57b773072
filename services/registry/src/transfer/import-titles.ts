import { TITLE_MAX_LENGTH } from '@toolhost/contracts';

const IMPORTED = ' (imported) ';

/**
 * `<title> (imported) n`, within the title length: a long title is cut (by code points, as the length is counted) to
 * leave room for the suffix.
 */
function importedTitle(title: string, n: number): string {
  const suffix = `${IMPORTED}${n}`;
  const points = Array.from(title);
  const room = TITLE_MAX_LENGTH - suffix.length;
  return points.length <= room ? `${title}${suffix}` : `${points.slice(0, room).join('').trimEnd()}${suffix}`;
}

/**
 * The titles an import gives its tools, in file order: a tool keeps its (whitespace-normalised) title when it is free,
 * else becomes `"<title> (imported) N"` with the first N from 1 that is free; the tenant's titles and those given earlier
 * in the same import are taken.
 */
export class ImportTitles {
  private readonly taken: Set<string>;
  /** How many titles had to change. */
  renamed = 0;

  constructor(inUse: Iterable<string>) {
    this.taken = new Set(inUse);
  }

  take(title: string): string {
    let given = title;
    if (this.taken.has(title)) {
      this.renamed += 1;
      for (let n = 1; this.taken.has(given); n++) given = importedTitle(title, n);
    }
    this.taken.add(given);
    return given;
  }
}
