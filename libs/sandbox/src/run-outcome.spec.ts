import { contentOf, toOutcome } from './run-outcome';

describe('contentOf', () => {
  it('uses a string result as is', () => {
    expect(contentOf('my-blog-post-title')).toEqual([{ type: 'text', text: 'my-blog-post-title' }]);
  });

  it('uses _llm when it is a string, else the JSON of the result', () => {
    expect(contentOf({ _llm: 'short', data: [1] })).toEqual([{ type: 'text', text: 'short' }]);
    expect(contentOf({ _llm: 3, a: 1 })).toEqual([{ type: 'text', text: '{"_llm":3,"a":1}' }]);
    expect(contentOf([1, 2])).toEqual([{ type: 'text', text: '[1,2]' }]);
    expect(contentOf(null)).toEqual([{ type: 'text', text: 'null' }]);
  });
});

describe('toOutcome', () => {
  it('keeps _llm, _render and _interactive in the result', () => {
    const result = { value: 1, _llm: 'one', _render: { kind: 'card' }, _interactive: { buttons: ['ok'] } };
    const outcome = toOutcome({ kind: 'succeeded', result, logs: ['l'], usedBridge: false }, 2, 0);
    expect(outcome).toEqual({
      status: 'succeeded',
      result,
      content: [{ type: 'text', text: 'one' }],
      logs: ['l'],
      durationMs: 2,
      budgetUsed: 0,
    });
  });

  it('maps pi content to content and keeps details as the result', () => {
    const outcome = toOutcome(
      { kind: 'succeeded', result: { n: 1 }, piContent: ['a', 'b'], logs: [], usedBridge: false },
      1,
      0,
    );
    expect(outcome.status === 'succeeded' && outcome.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
  });

  it('passes failures through with logs and budget', () => {
    const outcome = toOutcome(
      { kind: 'failed', error: { code: 'TIMEOUT', message: 'slow' }, logs: ['x'], usedBridge: true },
      5,
      3,
    );
    expect(outcome).toEqual({
      status: 'failed',
      error: { code: 'TIMEOUT', message: 'slow' },
      logs: ['x'],
      durationMs: 5,
      budgetUsed: 3,
    });
  });
});
