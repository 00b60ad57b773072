import { tradingGooseFileSchema } from '@toolhost/contracts';
import { detectShape, type PiRegistration } from '@toolhost/sandbox';
import { RegistryError, type FieldProblem } from '../errors/registry.error';
import { declarationOf, type PiModuleInspector } from '../tools/pi-module.inspector';
import type { ToolInputValidator } from '../tools/tool-input.validator';
import { BodyValidator } from '../validation/body-validator';
import { distinct, isRecord, under, type PlannedTool } from './planned-tool';

// The envelope only: each customTools item is checked as a ToolInput, so that every item's problems are named at once.
const envelopeSchema = {
  ...tradingGooseFileSchema,
  properties: { ...tradingGooseFileSchema.properties, customTools: { type: 'array' } },
};

interface Envelope {
  customTools: unknown[];
}

/** A customTools item that passed its checks: its version fields, and the function name it gives. */
interface CheckedItem {
  at: string;
  planned: PlannedTool;
  functionName: string | undefined;
}

function functionNameIn(schema: unknown): string | undefined {
  const fn = isRecord(schema) ? schema.function : undefined;
  return isRecord(fn) && typeof fn.name === 'string' ? fn.name : undefined;
}

/**
 * A TradingGoose export file → the tools it holds, each checked as a ToolInput (`{title, schema, code}`; its code runs
 * as toolhost code: a function body with `<param>` and `{{SECRET}}`, a handle module or a pi module). Every problem
 * of every item is named (`/customTools/3/schema/function/parameters`), and the file is refused whole when there is any.
 * An item whose code is a pi module runs the registerTool call named by `schema.function.name`, or its first.
 */
export class TradingGooseImporter {
  private readonly envelope = new BodyValidator<Envelope>(envelopeSchema);

  constructor(
    private readonly input: ToolInputValidator,
    private readonly piModules: PiModuleInspector,
    private readonly maxTools: number,
  ) {}

  async plan(tenantId: string, body: unknown): Promise<PlannedTool[]> {
    const { customTools } = this.envelope.parse(body);
    if (customTools.length > this.maxTools) {
      throw RegistryError.invalidBody([
        {
          path: '/customTools',
          message: `holds ${customTools.length} tools, over the limit of ${this.maxTools} per import`,
        },
      ]);
    }
    const problems: FieldProblem[] = [];
    const checked: CheckedItem[] = [];
    customTools.forEach((item, index) => {
      const at = `/customTools/${index}`;
      const found = this.checkItem(item, at);
      if (Array.isArray(found)) problems.push(...found);
      else checked.push(found);
    });
    // Only what passed: a pi module is run to learn its registrations, once per module.
    const modules = new Map<string, Awaited<ReturnType<PiModuleInspector['registrations']>>>();
    for (const item of checked) {
      const { fields } = item.planned;
      if (detectShape(fields.code) !== 'pi') continue;
      let found = modules.get(fields.code);
      if (found === undefined) {
        found = await this.piModules.registrations(tenantId, fields.code, fields, `${item.at}/code`);
        modules.set(fields.code, found);
      }
      if ('problem' in found) problems.push({ ...found.problem, path: `${item.at}/code` });
      else problems.push(...this.selectRegistration(item, found.registrations));
    }
    if (problems.length > 0) throw RegistryError.invalidBody(distinct(problems));
    return checked.map((item) => item.planned);
  }

  private checkItem(item: unknown, at: string): CheckedItem | FieldProblem[] {
    if (!isRecord(item)) return [{ path: at, message: 'must be an object {title, schema, code}' }];
    // The fields toolhost reads; the rest of an item is TradingGoose's and ignored.
    const toolInput: Record<string, unknown> = {};
    for (const field of ['title', 'schema', 'code'] as const)
      if (item[field] !== undefined) toolInput[field] = item[field];
    const checked = this.input.checkCreate(toolInput);
    if (item.schema === undefined) {
      // The file's form is `schema`: not having it is that, not a missing description or inputSchema.
      const others = checked.problems.filter((p) => p.path !== '/description' && p.path !== '/inputSchema');
      return under(at, [{ path: '/schema', message: 'is required' }, ...others]);
    }
    if (!checked.parsed) return under(at, checked.problems);
    return {
      at,
      planned: { fields: checked.parsed.fields, format: 'tradingGoose' },
      functionName: functionNameIn(item.schema),
    };
  }

  /** The registration a pi-module item runs: the one `function.name` names, else the first (as any pi tool). */
  private selectRegistration(item: CheckedItem, registrations: PiRegistration[]): FieldProblem[] {
    const path = `${item.at}/code`;
    if (registrations.length === 0) {
      return [{ path, message: 'registers no tool: its default export must call pi.registerTool({…, execute})' }];
    }
    const named = registrations.findIndex((r) => r !== null && r.name === item.functionName);
    const index = Math.max(named, 0);
    const declaration = declarationOf(registrations[index] ?? null, index);
    if (Array.isArray(declaration)) return declaration.map((message) => ({ path, message }));
    item.planned.fields.piToolName = named >= 0 ? declaration.name : null;
    return [];
  }
}
