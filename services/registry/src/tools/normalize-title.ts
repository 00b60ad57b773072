/** Trims and collapses every whitespace run to one space: the form titles are stored and compared in. */
export function normalizeTitle(title: string): string {
  return title.replace(/\s+/gu, ' ').trim();
}
