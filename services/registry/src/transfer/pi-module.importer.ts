import { DEFAULT_LIMITS, piModuleImportSchema, type PiModuleImport } from '@toolhost/contracts';
import { RegistryError, type FieldProblem } from '../errors/registry.error';
import { codeTooLarge } from '../tools/code-syntax.checker';
import { callName, declarationOf, type PiModuleInspector } from '../tools/pi-module.inspector';
import type { ToolInputValidator } from '../tools/tool-input.validator';
import { BodyValidator } from '../validation/body-validator';
import { distinct, type PlannedTool } from './planned-tool';

const REGISTERS_NOTHING =
  'registers no tool: its default export must call pi.registerTool({name, description, parameters, execute})';

/** ToolInput fields → the registerTool field they come from, for messages. */
function renamed(path: string, labelled: boolean): string {
  if (path === '/title') return labelled ? 'label' : 'name';
  if (path.startsWith('/inputSchema')) return `parameters${path.slice('/inputSchema'.length).replaceAll('/', '.')}`;
  return path.replace(/^\//, '').replaceAll('/', '.');
}

/**
 * `{format: "pi", module}` → one tool per `pi.registerTool` call of the module, found by running its default export in
 * the sandbox (PiModuleInspector). Each tool stores the whole module and the name of its own call, which is the one it
 * runs; its title is the call's label (else its name), its description and input schema the call's. Every call's
 * problems are named at `/module` and the module is refused whole when there is any.
 */
export class PiModuleImporter {
  private readonly body = new BodyValidator<PiModuleImport>(piModuleImportSchema);

  constructor(
    private readonly input: ToolInputValidator,
    private readonly piModules: PiModuleInspector,
    private readonly maxTools: number,
  ) {}

  async plan(tenantId: string, body: unknown): Promise<PlannedTool[]> {
    const { module } = this.body.parse(body);
    // Before the module runs: code over the size limit is not run at all.
    const tooLarge = codeTooLarge(module);
    if (tooLarge) {
      throw RegistryError.invalidBody([
        { path: '/module', message: `is ${tooLarge.bytes} bytes, over the limit of ${tooLarge.limit} bytes` },
      ]);
    }
    const found = await this.piModules.registrations(tenantId, module, DEFAULT_LIMITS, '/module');
    if ('problem' in found) throw RegistryError.invalidBody([found.problem]);
    const { registrations } = found;
    if (registrations.length === 0) throw RegistryError.invalidBody([{ path: '/module', message: REGISTERS_NOTHING }]);
    if (registrations.length > this.maxTools) {
      throw RegistryError.invalidBody([
        {
          path: '/module',
          message: `registers ${registrations.length} tools, over the limit of ${this.maxTools} per import`,
        },
      ]);
    }
    const problems: FieldProblem[] = [];
    const planned: PlannedTool[] = [];
    const names = new Set<string>();
    registrations.forEach((registration, index) => {
      const declaration = declarationOf(registration, index);
      if (Array.isArray(declaration)) {
        problems.push(...declaration.map((message) => ({ path: '/module', message })));
        return;
      }
      const call = callName(index, declaration.name);
      const own: string[] = [];
      if (names.has(declaration.name)) own.push(`${call}: name is registered twice; each tool needs a name of its own`);
      names.add(declaration.name);
      if (declaration.description === undefined) own.push(`${call}: description is required`);
      if (declaration.parameters === undefined) own.push(`${call}: parameters is required (a JSON Schema object)`);
      if (own.length > 0) {
        problems.push(...own.map((message) => ({ path: '/module', message })));
        return;
      }
      const checked = this.input.checkCreate({
        title: declaration.label ?? declaration.name,
        description: declaration.description,
        inputSchema: declaration.parameters,
        code: module,
      });
      if (!checked.parsed) {
        for (const problem of checked.problems) {
          const message =
            problem.path === '/code'
              ? problem.message
              : `${call}: ${renamed(problem.path, declaration.label !== undefined)} ${problem.message}`;
          problems.push({ ...problem, path: '/module', message });
        }
        return;
      }
      planned.push({ fields: { ...checked.parsed.fields, piToolName: declaration.name }, format: 'pi' });
    });
    if (problems.length > 0) throw RegistryError.invalidBody(distinct(problems));
    return planned;
  }
}
