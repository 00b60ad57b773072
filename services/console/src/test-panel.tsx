// Runs a tool without counting it: a saved tool (`POST /v1/tools/{id}/test`, its current or an older version, or its
// fixtures) or an unsaved definition (`POST /v1/tools/test`). Input from a form built from the schema, or raw JSON.
import { useEffect, useId, useState } from 'preact/hooks';
import { api, ApiError, errorText, type FieldProblem } from './api';
import { CodeEditor } from './code-editor';
import type { FixtureRun, Invocation, Json, JsonObject } from './types';
import { ErrorMessage, JsonView, Problems } from './widgets';

export type TestTarget = { kind: 'saved'; id: string; versions?: number[] } | { kind: 'unsaved'; tool: () => unknown };

interface Property {
  name: string;
  type: string;
  enum?: Json[];
  description?: string;
  required: boolean;
}

/** The top-level properties a plain form can take; a schema with anything else gets the raw JSON editor. */
function formProperties(schema: JsonObject | undefined): Property[] | null {
  const properties = schema?.properties;
  if (!properties || typeof properties !== 'object' || Array.isArray(properties)) return null;
  const required = Array.isArray(schema.required) ? schema.required : [];
  const out: Property[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
    const type = typeof raw.type === 'string' ? raw.type : Array.isArray(raw.enum) ? 'string' : '';
    if (!['string', 'number', 'integer', 'boolean'].includes(type)) return null;
    out.push({
      name,
      type,
      ...(Array.isArray(raw.enum) ? { enum: raw.enum } : {}),
      ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
      required: required.includes(name),
    });
  }
  return out;
}

function valueOf(property: Property, text: string): Json | undefined {
  if (text === '' && property.type !== 'boolean') return undefined;
  if (property.enum) return property.enum.find((option) => JSON.stringify(option) === text);
  if (property.type === 'boolean') return text === 'true';
  if (property.type === 'number' || property.type === 'integer') return Number(text);
  return text;
}

export function TestPanel({ target, schema }: { target: TestTarget; schema: JsonObject | undefined }) {
  const uid = useId();
  const properties = formProperties(schema);
  const [mode, setMode] = useState<'form' | 'json'>(properties ? 'form' : 'json');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [raw, setRaw] = useState('{}');
  const [version, setVersion] = useState('');
  const [busy, setBusy] = useState(false);
  const [invocation, setInvocation] = useState<Invocation | null>(null);
  const [fixtures, setFixtures] = useState<FixtureRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [code, setCode] = useState<string>('');

  useEffect(() => {
    if (!properties && mode === 'form') setMode('json');
  }, [properties, mode]);

  const input = (): Json => {
    if (mode === 'json') return JSON.parse(raw) as Json;
    const out: JsonObject = {};
    for (const property of properties ?? []) {
      const value = valueOf(property, fields[property.name] ?? '');
      if (value !== undefined) out[property.name] = value;
    }
    return out;
  };

  const run = async (withFixtures: boolean): Promise<void> => {
    setError(null);
    setProblems([]);
    setInvocation(null);
    setFixtures(null);
    let body: Record<string, unknown>;
    try {
      body = withFixtures ? {} : { input: input() };
    } catch (failure) {
      setError(`The input is not valid JSON: ${(failure as Error).message}`);
      return;
    }
    setBusy(true);
    try {
      if (target.kind === 'saved') {
        if (version) body.version = Number(version);
        const tool = await api<{ code: string }>(
          'GET',
          `/v1/tools/${target.id}${version ? `/versions/${version}` : ''}`,
        );
        setCode(tool.code);
        const answer = await api<Invocation | FixtureRun>('POST', `/v1/tools/${target.id}/test`, body);
        if ('fixtures' in answer) setFixtures(answer);
        else setInvocation(answer);
      } else {
        const tool = target.tool() as { code?: string };
        setCode(tool.code ?? '');
        setInvocation(await api<Invocation>('POST', '/v1/tools/test', { tool, ...body }));
      }
    } catch (failure) {
      setError(errorText(failure));
      if (failure instanceof ApiError) setProblems(failure.problems);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby={`${uid}-h`}>
      <h2 id={`${uid}-h`}>Test</h2>
      <p class="hint">A dry run: same sandbox and limits, counted neither as usage nor as failure.</p>
      <fieldset class="inline">
        <legend>Input as</legend>
        <label>
          <input
            type="radio"
            name={`${uid}-mode`}
            checked={mode === 'form'}
            disabled={!properties}
            onChange={() => setMode('form')}
          />
          Form from the schema
        </label>
        <label>
          <input type="radio" name={`${uid}-mode`} checked={mode === 'json'} onChange={() => setMode('json')} />
          Raw JSON
        </label>
      </fieldset>
      {mode === 'form' && properties && (
        <div class="input-form">
          {properties.length === 0 && <p class="hint">The schema takes no properties.</p>}
          {properties.map((property) => {
            const id = `${uid}-in-${property.name}`;
            const value = fields[property.name] ?? '';
            const set = (text: string): void => setFields({ ...fields, [property.name]: text });
            return (
              <div class="field" key={property.name}>
                <label for={id}>
                  {property.name}
                  {property.required && <span aria-hidden="true"> *</span>}
                  <span class="type"> ({property.type})</span>
                </label>
                {property.type === 'boolean' ? (
                  <input
                    id={id}
                    type="checkbox"
                    checked={value === 'true'}
                    onChange={(e) => set(String(e.currentTarget.checked))}
                  />
                ) : property.enum ? (
                  <select id={id} value={value} onChange={(e) => set(e.currentTarget.value)}>
                    <option value="">(none)</option>
                    {property.enum.map((option) => (
                      <option key={JSON.stringify(option)} value={JSON.stringify(option)}>
                        {typeof option === 'string' ? option : JSON.stringify(option)}
                      </option>
                    ))}
                  </select>
                ) : property.type === 'string' ? (
                  <input
                    id={id}
                    type="text"
                    required={property.required}
                    value={value}
                    onInput={(e) => set(e.currentTarget.value)}
                  />
                ) : (
                  <input
                    id={id}
                    type="number"
                    step={property.type === 'integer' ? 1 : 'any'}
                    required={property.required}
                    value={value}
                    onInput={(e) => set(e.currentTarget.value)}
                  />
                )}
                {property.description && <small>{property.description}</small>}
              </div>
            );
          })}
        </div>
      )}
      {mode === 'json' && (
        <div class="field">
          <label id={`${uid}-raw`}>Input (JSON)</label>
          <CodeEditor labelId={`${uid}-raw`} language="json" value={raw} onChange={setRaw} minLines={4} />
        </div>
      )}
      {target.kind === 'saved' && target.versions && target.versions.length > 1 && (
        <label>
          Version
          <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
            <option value="">current</option>
            {target.versions.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
      )}
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void run(false)}>
          {busy ? 'Running…' : 'Run test'}
        </button>
        {target.kind === 'saved' && (
          <button type="button" disabled={busy} onClick={() => void run(true)}>
            Run fixtures
          </button>
        )}
      </div>
      <ErrorMessage error={error} />
      <Problems problems={problems} />
      {invocation && <InvocationView invocation={invocation} code={code} />}
      {fixtures && (
        <div class="fixtures-result" aria-live="polite">
          <p class={fixtures.passed ? 'ok' : 'error'}>
            Fixtures: {fixtures.passed ? 'all passed' : 'some failed'} (
            {fixtures.fixtures.filter((f) => f.passed).length}/{fixtures.fixtures.length})
          </p>
          {fixtures.fixtures.length === 0 && <p class="hint">This tool has no fixtures.</p>}
          <ul>
            {fixtures.fixtures.map((fixture) => (
              <li key={fixture.name} class={fixture.passed ? 'ok' : 'error'}>
                <strong>
                  {fixture.passed ? '✓' : '✗'} {fixture.name}
                </strong>
                {fixture.message && <span>: {fixture.message}</span>}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** The line of the tool's code an error message names (`… (line N, column M)`). */
function errorLine(message: string, code: string): { line: number; text: string } | null {
  const match = /\(line (\d+)(?:, column \d+)?\)/.exec(message);
  if (!match) return null;
  const line = Number(match[1]);
  const text = code.split('\n')[line - 1];
  return text === undefined ? null : { line, text };
}

export function InvocationView({ invocation, code }: { invocation: Invocation; code: string }) {
  const where = invocation.error ? errorLine(invocation.error.message, code) : null;
  return (
    <div class="invocation" aria-live="polite" data-status={invocation.status}>
      <p>
        <span class={`badge ${invocation.status === 'succeeded' ? 'active' : 'disabled'}`}>{invocation.status}</span>{' '}
        version {invocation.version}
        {invocation.durationMs !== undefined && <> · {invocation.durationMs} ms</>}
      </p>
      {invocation.error && (
        <div class="error" role="alert">
          <p>
            <code class="error-code">{invocation.error.code}</code> {invocation.error.message}
          </p>
          {where && (
            <pre class="error-line">
              {where.line}: {where.text}
            </pre>
          )}
        </div>
      )}
      {invocation.result !== undefined && <JsonView label="Result" value={invocation.result} />}
      {invocation.content && invocation.content.length > 0 && (
        <div>
          <h3>Content</h3>
          {invocation.content.map((part, index) => (
            <pre key={index} class="content">
              {part.text ?? JSON.stringify(part)}
            </pre>
          ))}
        </div>
      )}
      <h3>Logs</h3>
      {invocation.logs && invocation.logs.length > 0 ? (
        <pre class="logs">{invocation.logs.join('\n')}</pre>
      ) : (
        <p class="hint">No logs.</p>
      )}
    </div>
  );
}
