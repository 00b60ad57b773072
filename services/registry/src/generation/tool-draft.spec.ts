import { parseGeneratedTool } from './tool-draft';

const draft = {
  title: 'Add',
  description: 'Adds',
  inputSchema: { type: 'object' },
  code: 'export async function handle(input) { return input.a + input.b; }',
  examples: [{ input: { a: 1, b: 2 }, output: 3 }, { input: {} }],
};

describe('parseGeneratedTool', () => {
  it('reads a draft, with or without a ```json fence', () => {
    expect(parseGeneratedTool(JSON.stringify(draft))).toEqual({ draft });
    expect(parseGeneratedTool('```json\n' + JSON.stringify(draft) + '\n```')).toEqual({ draft });
  });

  it('says what is wrong with an answer that is not a draft', () => {
    expect(parseGeneratedTool('Sure! Here is your tool')).toEqual({
      problem: expect.stringContaining('the answer is not JSON'),
    });
    expect(parseGeneratedTool('[1]')).toEqual({ problem: 'the answer is not a JSON object' });
    expect(parseGeneratedTool(JSON.stringify({ ...draft, code: '' }))).toEqual({
      problem: '"code" must be a non-empty string',
    });
    expect(parseGeneratedTool(JSON.stringify({ ...draft, examples: [{ input: 1 }] }))).toEqual({
      problem: '"examples[0]" must be an object with an object "input"',
    });
  });
});
