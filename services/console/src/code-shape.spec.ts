import { detectShape } from './code-shape';

describe('detectShape', () => {
  it.each([
    ['export async function handle(input, ctx) { return 1; }', 'handle'],
    ['async function handle(input) {\n  return input;\n}', 'handle'],
    ['function handle(input) { return 1; }', 'handle'],
    ['export default function (pi) {\n  pi.registerTool({ name: "x", execute() {} });\n}', 'pi'],
    ['return params.a + params.b;', 'body'],
    ['const handler = 1;\nreturn handler;', 'body'],
  ])('%s is %s', (code, shape) => {
    expect(detectShape(code)).toBe(shape);
  });
});
