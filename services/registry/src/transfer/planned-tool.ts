import type { FieldProblem } from '../errors/registry.error';
import type { ToolVersionFields } from '../tools/tool-input.validator';

/** A tool an import will create, checked: its version fields (the title before collisions) and where it came from. */
export interface PlannedTool {
  fields: ToolVersionFields;
  format: 'tradingGoose' | 'pi';
}

/** The problems of a part of the body, moved under its pointer: `/title` of item 3 → `/customTools/3/title`. */
export function under(pointer: string, problems: FieldProblem[]): FieldProblem[] {
  return problems.map((problem) => ({ ...problem, path: `${pointer}${problem.path}` }));
}

/** Each problem once (several registerTool calls of one module share its code's problems). */
export function distinct(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
