import { lineDiff } from './line-diff';

describe('lineDiff', () => {
  it('keeps common lines and marks what was removed and added, in order', () => {
    expect(lineDiff('a\nb\nc\nd', 'a\nc\nx\nd')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'x' },
      { kind: 'same', text: 'd' },
    ]);
  });

  it('gives only same lines for equal texts, and only added ones from empty', () => {
    expect(lineDiff('a\nb', 'a\nb').every((line) => line.kind === 'same')).toBe(true);
    expect(lineDiff('', 'a\nb')).toEqual([
      { kind: 'removed', text: '' },
      { kind: 'added', text: 'a' },
      { kind: 'added', text: 'b' },
    ]);
  });

  it('rebuilds both texts from its lines', () => {
    const before = 'function f() {\n  return 1;\n}\n';
    const after = 'function f(x) {\n  const y = x;\n  return 1;\n}\n';
    const diff = lineDiff(before, after);
    const side = (kind: 'removed' | 'added') =>
      diff
        .filter((line) => line.kind !== kind)
        .map((line) => line.text)
        .join('\n');
    expect(side('added')).toBe(before);
    expect(side('removed')).toBe(after);
  });
});
