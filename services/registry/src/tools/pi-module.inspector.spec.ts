import { callName, declarationOf, PI_TOOL_NAME_MAX_LENGTH } from './pi-module.inspector';

describe('declarationOf', () => {
  it('keeps what a call declared when it has a name and an execute function', () => {
    expect(
      declarationOf(
        { name: 'weather', label: 'Weather', description: 'd', parameters: { type: 'object' }, executable: true },
        0,
      ),
    ).toEqual({ name: 'weather', label: 'Weather', description: 'd', parameters: { type: 'object' } });
    expect(declarationOf({ name: 'bare', executable: true }, 0)).toEqual({ name: 'bare' });
  });

  it('names every problem of a call, by its number and name', () => {
    expect(declarationOf(null, 2)).toEqual(['registerTool #3 is not given an object']);
    expect(declarationOf({ name: 7, label: 3, executable: false }, 0)).toEqual([
      `registerTool #1: name must be a string of 1 to ${PI_TOOL_NAME_MAX_LENGTH} characters`,
      'registerTool #1: execute must be a function',
      'registerTool #1: label must be a string',
    ]);
    expect(declarationOf({ name: 'x'.repeat(PI_TOOL_NAME_MAX_LENGTH + 1), executable: true }, 0)).toHaveLength(1);
    expect(declarationOf({ name: 'inert', executable: false }, 1)).toEqual([
      'registerTool #2 ("inert"): execute must be a function',
    ]);
  });

  it('names a call with or without its name', () => {
    expect(callName(0)).toBe('registerTool #1');
    expect(callName(4, 'a"b')).toBe('registerTool #5 ("a\\"b")');
  });
});
