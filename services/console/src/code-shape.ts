// Which of the three accepted code shapes (CONTRACT.md, "Tool code") a piece of code is, as the editor shows it.
// A quick look for the user while typing; the server's parser decides when the tool is saved.

export type CodeShape = 'handle' | 'body' | 'pi';

export function detectShape(code: string): CodeShape {
  if (/export\s+default\s+(async\s+)?function\b[^]*\bregisterTool\s*\(/.test(code)) return 'pi';
  if (/^\s*(export\s+)?(async\s+)?function\s*\*?\s*handle\s*\(/m.test(code)) return 'handle';
  return 'body';
}

export const SHAPE_LABELS: Record<CodeShape, string> = {
  handle: 'handle function: handle(input, ctx) returns the result',
  body: 'function body: runs as the body of async function (input, ctx)',
  pi: 'pi extension module: pi.registerTool({…, execute})',
};
