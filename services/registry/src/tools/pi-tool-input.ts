import type { PiRegistration } from '@toolhost/sandbox';
import { RegistryError, type FieldProblem } from '../errors/registry.error';
import { callName, declarationOf, type PiDeclaration, type PiModuleInspector } from './pi-module.inspector';
import type { ParsedCreate, RegistrationField, ToolInputValidator } from './tool-input.validator';

/** The registerTool field each ToolInput field is taken from. */
const DECLARED_AS: Record<RegistrationField, 'description' | 'parameters'> = {
  description: 'description',
  inputSchema: 'parameters',
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A ToolInput whose code is a pi module and which leaves out `description` or `inputSchema`: its one registerTool
 * call gives them (`parameters` is the input schema), read by running the module's default export in the sandbox.
 * A module that registers no tool or several, or whose call lacks what is missing, is a 400 naming `/code`.
 */
export class PiToolInput {
  constructor(
    private readonly inspector: PiModuleInspector,
    private readonly input: ToolInputValidator,
  ) {}

  async complete(tenantId: string, body: unknown, parsed: ParsedCreate): Promise<ParsedCreate> {
    const { fields, fromRegistration } = parsed;
    const found = await this.inspector.registrations(tenantId, fields.code, fields, '/code');
    if ('problem' in found) throw RegistryError.invalidBody([found.problem]);
    const declaration = onlyDeclaration(found.registrations);
    const completed: Record<string, unknown> = isRecord(body) ? { ...body } : {};
    const problems: FieldProblem[] = [];
    for (const field of fromRegistration) {
      const value = declaration[DECLARED_AS[field]];
      if (value === undefined) {
        problems.push({
          path: '/code',
          message: `${callName(0, declaration.name)} declares no ${DECLARED_AS[field]}: send ${field}`,
        });
      } else completed[field] = value;
    }
    if (problems.length > 0) throw RegistryError.invalidBody(problems);
    const checked = this.input.checkCreate(completed);
    if (checked.parsed) return checked.parsed;
    // What is wrong with a field taken from the module is the module's: named as its call's.
    const named = checked.problems.map((problem): FieldProblem => {
      const field = fromRegistration.find((f) => problem.path === `/${f}` || problem.path.startsWith(`/${f}/`));
      if (field === undefined) return problem;
      const at = `${DECLARED_AS[field]}${problem.path.slice(field.length + 1)}`;
      return { path: '/code', message: `${callName(0, declaration.name)}: ${at} ${problem.message}` };
    });
    throw RegistryError.invalidBody(named, checked.unknownField);
  }
}

function onlyDeclaration(registrations: PiRegistration[]): PiDeclaration {
  const [first] = registrations;
  if (first === undefined) {
    throw RegistryError.invalidBody([
      {
        path: '/code',
        message:
          'registers no tool: its default export must call pi.registerTool({name, description, parameters, execute})',
      },
    ]);
  }
  if (registrations.length > 1) {
    throw RegistryError.invalidBody([
      {
        path: '/code',
        message:
          `registers ${registrations.length} tools: send description and inputSchema (the first one runs), or import ` +
          'the module (POST /v1/tools/import with {format: "pi", module}) to get one tool for each',
      },
    ]);
  }
  const declaration = declarationOf(first, 0);
  if (Array.isArray(declaration))
    throw RegistryError.invalidBody(declaration.map((message) => ({ path: '/code', message })));
  return declaration;
}
