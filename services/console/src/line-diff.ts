// A line diff between two texts (versions of a tool), by longest common subsequence. Tool code is at most 256 KiB,
// so versions being compared are a few thousand lines at most; a table of their lengths' product fits well.

export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const rows = a.length + 1;
  const cols = b.length + 1;
  // lengths[i * cols + j]: the LCS length of a[i:] and b[j:].
  const lengths = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * cols + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * cols + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * cols + j] ?? 0, lengths[i * cols + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] ?? '' });
      i++;
      j++;
    } else if ((lengths[(i + 1) * cols + j] ?? 0) >= (lengths[i * cols + j + 1] ?? 0)) {
      out.push({ kind: 'removed', text: a[i] ?? '' });
      i++;
    } else {
      out.push({ kind: 'added', text: b[j] ?? '' });
      j++;
    }
  }
  for (; i < a.length; i++) out.push({ kind: 'removed', text: a[i] ?? '' });
  for (; j < b.length; j++) out.push({ kind: 'added', text: b[j] ?? '' });
  return out;
}
