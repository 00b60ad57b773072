// Create and edit a tool: every field of ToolInput, the schema checked as you type, the server's errors shown on the
// fields they name. Editing sends only what changed (a PATCH is a new version; secrets merge, values write-only).
import { useEffect, useId, useMemo, useState } from 'preact/hooks';
import { api, ApiError, errorText, type FieldProblem } from './api';
import { CodeEditor } from './code-editor';
import { detectShape, SHAPE_LABELS } from './code-shape';
import { navigate } from './router';
import { checkInputSchema } from './schema-check';
import { TestPanel } from './test-panel';
import type { Fixture, Json, JsonObject, ToolRecord } from './types';
import { ErrorMessage, Problems } from './widgets';

export interface ToolDraft {
  title: string;
  description: string;
  inputSchema: JsonObject;
  code: string;
  fixtures?: Fixture[];
}

const NEW_TOOL: ToolDraft = {
  title: '',
  description: '',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  code: 'export async function handle(input, ctx) {\n  return { greeting: `Hello, ${input.name}!` };\n}\n',
};

const FIELDS = [
  'title',
  'description',
  'inputSchema',
  'code',
  'timeoutMs',
  'memoryMb',
  'allowedTools',
  'network',
  'secrets',
  'fixtures',
  'requireFixtures',
] as const;
type Field = (typeof FIELDS)[number] | 'general';

/** The form field a server problem belongs to, by the first segment of its JSON pointer. */
function fieldOf(path: string): Field {
  const first = path.split('/')[1] ?? '';
  if (first === 'schema') return path.includes('/parameters') ? 'inputSchema' : 'description';
  return (FIELDS as readonly string[]).includes(first) ? (first as Field) : 'general';
}

const lines = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter(Boolean);
const sameList = (a: string[], b: string[]): boolean => a.length === b.length && a.every((item, i) => item === b[i]);

export function ToolForm({ record, draft }: { record?: ToolRecord; draft?: ToolDraft }) {
  const uid = useId();
  const start = record ?? draft ?? NEW_TOOL;
  const [title, setTitle] = useState(start.title);
  const [description, setDescription] = useState(start.description);
  const [schemaText, setSchemaText] = useState(JSON.stringify(start.inputSchema, null, 2));
  const [code, setCode] = useState(start.code);
  const [timeoutMs, setTimeoutMs] = useState(record ? String(record.timeoutMs) : '');
  const [memoryMb, setMemoryMb] = useState(record ? String(record.memoryMb) : '');
  const [allowedTools, setAllowedTools] = useState((record?.allowedTools ?? []).join('\n'));
  const [hosts, setHosts] = useState((record?.network?.allow ?? []).join('\n'));
  const [secretValues, setSecretValues] = useState<Record<string, string>>({});
  const [removedSecrets, setRemovedSecrets] = useState<string[]>([]);
  const [newSecrets, setNewSecrets] = useState<{ name: string; value: string }[]>([]);
  const startFixtures = record?.fixtures ?? draft?.fixtures ?? [];
  const [fixturesText, setFixturesText] = useState(JSON.stringify(startFixtures, null, 2));
  const [requireFixtures, setRequireFixtures] = useState(record?.requireFixtures ?? false);
  const [problems, setProblems] = useState<Partial<Record<Field, FieldProblem[]>>>({});
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const schemaCheck = useMemo(() => checkInputSchema(schemaText), [schemaText]);
  const shape = detectShape(code);
  // The server's problems on a field stay until that field changes.
  useEffect(() => setProblems((p) => ({ ...p, inputSchema: [] })), [schemaText]);
  useEffect(() => setProblems((p) => ({ ...p, code: [] })), [code]);

  const fixtures = (): Fixture[] => {
    const parsed = JSON.parse(fixturesText || '[]') as unknown;
    if (!Array.isArray(parsed)) throw new Error('fixtures must be a JSON array');
    return parsed as Fixture[];
  };

  /** The whole ToolInput as the form holds it (create, and a dry run of the unsaved tool). */
  const toolInput = (): Record<string, unknown> => {
    const secrets = {
      ...Object.fromEntries(Object.entries(secretValues).filter(([, value]) => value)),
      ...Object.fromEntries(newSecrets.filter((s) => s.name).map((s) => [s.name, s.value])),
    };
    const body: Record<string, unknown> = {
      title,
      description,
      inputSchema: JSON.parse(schemaText) as Json,
      code,
    };
    if (timeoutMs) body.timeoutMs = Number(timeoutMs);
    if (memoryMb) body.memoryMb = Number(memoryMb);
    if (lines(allowedTools).length > 0) body.allowedTools = lines(allowedTools);
    if (lines(hosts).length > 0) body.network = { allow: lines(hosts) };
    if (Object.keys(secrets).length > 0) body.secrets = secrets;
    const list = fixtures();
    // Sent only when used, so that a registry without fixtures still takes the rest.
    if (list.length > 0) body.fixtures = list;
    if (requireFixtures) body.requireFixtures = true;
    return body;
  };

  /** What changed against the record: a PATCH sends only that. */
  const patch = (current: ToolRecord): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (title !== current.title) body.title = title;
    if (description !== current.description) body.description = description;
    const schema = JSON.parse(schemaText) as Json;
    if (JSON.stringify(schema) !== JSON.stringify(current.inputSchema)) body.inputSchema = schema;
    if (code !== current.code) body.code = code;
    if (timeoutMs && Number(timeoutMs) !== current.timeoutMs) body.timeoutMs = Number(timeoutMs);
    if (memoryMb && Number(memoryMb) !== current.memoryMb) body.memoryMb = Number(memoryMb);
    if (!sameList(lines(allowedTools), current.allowedTools)) {
      body.allowedTools = lines(allowedTools).length > 0 ? lines(allowedTools) : null;
    }
    if (!sameList(lines(hosts), current.network?.allow ?? [])) {
      body.network = lines(hosts).length > 0 ? { ...(current.network ?? {}), allow: lines(hosts) } : null;
    }
    const secrets: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(secretValues)) if (value) secrets[name] = value;
    for (const name of removedSecrets) secrets[name] = null;
    for (const s of newSecrets) if (s.name) secrets[s.name] = s.value;
    if (Object.keys(secrets).length > 0) body.secrets = secrets;
    const list = fixtures();
    if (JSON.stringify(list) !== JSON.stringify(current.fixtures ?? [])) body.fixtures = list;
    if (requireFixtures !== (current.requireFixtures ?? false)) body.requireFixtures = requireFixtures;
    return body;
  };

  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(null);
    setProblems({});
    let body: Record<string, unknown>;
    try {
      body = record ? patch(record) : toolInput();
    } catch (failure) {
      setError(`Fix the form first: ${(failure as Error).message}`);
      return;
    }
    if (record && Object.keys(body).length === 0) {
      setError('Nothing changed: there is nothing to save.');
      return;
    }
    setSaving(true);
    try {
      const saved = record
        ? await api<ToolRecord>('PATCH', `/v1/tools/${record.id}`, body)
        : await api<ToolRecord>('POST', '/v1/tools', body);
      navigate(`/tools/${saved.id}`);
    } catch (failure) {
      setError(`Not saved: ${errorText(failure)}`);
      if (failure instanceof ApiError) {
        const byField: Partial<Record<Field, FieldProblem[]>> = {};
        for (const problem of failure.problems) (byField[fieldOf(problem.path)] ??= []).push(problem);
        const failing = (failure.details as { failing?: { name: string; message: string }[] } | null)?.failing;
        if (Array.isArray(failing)) {
          byField.fixtures = failing.map((f) => ({ path: `/fixtures (${f.name})`, message: f.message }));
        }
        setProblems(byField);
      }
    } finally {
      setSaving(false);
    }
  };

  const fieldProblems = (field: Field): FieldProblem[] => problems[field] ?? [];
  const describedBy = (field: Field): string | undefined =>
    fieldProblems(field).length > 0 ? `${uid}-${field}-problems` : undefined;
  const invalid = (field: Field): 'true' | undefined => (fieldProblems(field).length > 0 ? 'true' : undefined);
  const schemaProblems = [...schemaCheck.problems, ...fieldProblems('inputSchema')];

  return (
    <div class="tool-form-layout">
      <form class="tool-form panel" onSubmit={(e) => void save(e)} noValidate aria-labelledby={`${uid}-h`}>
        <h1 id={`${uid}-h`}>{record ? `Edit ${record.title}` : 'New tool'}</h1>
        <div class="field">
          <label for={`${uid}-title`}>Title</label>
          <input
            id={`${uid}-title`}
            value={title}
            required
            aria-invalid={invalid('title')}
            aria-describedby={describedBy('title')}
            onInput={(e) => setTitle(e.currentTarget.value)}
          />
          <Problems problems={fieldProblems('title')} id={`${uid}-title-problems`} />
        </div>
        <div class="field">
          <label for={`${uid}-description`}>Description</label>
          <textarea
            id={`${uid}-description`}
            rows={3}
            value={description}
            aria-invalid={invalid('description')}
            aria-describedby={describedBy('description')}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
          <Problems problems={fieldProblems('description')} id={`${uid}-description-problems`} />
        </div>
        <div class="field" data-field="inputSchema">
          <label id={`${uid}-schema`}>Input schema (JSON Schema, type "object")</label>
          <CodeEditor
            labelId={`${uid}-schema`}
            language="json"
            value={schemaText}
            onChange={setSchemaText}
            check={(text) =>
              checkInputSchema(text).problems.map((p) => ({
                from: 0,
                to: Math.min(text.length, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n')),
                severity: 'error',
                message: `${p.path || '(schema)'} ${p.message}`,
              }))
            }
          />
          {schemaProblems.length === 0 ? (
            <p class="ok" aria-live="polite">
              Valid schema
            </p>
          ) : (
            <Problems problems={schemaProblems} id={`${uid}-inputSchema-problems`} />
          )}
        </div>
        <div class="field" data-field="code">
          <label id={`${uid}-code`}>Code (JavaScript)</label>
          <CodeEditor labelId={`${uid}-code`} language="javascript" value={code} onChange={setCode} minLines={10} />
          <p class="shape" aria-live="polite">
            Detected shape: <strong data-shape={shape}>{shape}</strong> — {SHAPE_LABELS[shape]}
          </p>
          <Problems problems={fieldProblems('code')} id={`${uid}-code-problems`} />
        </div>
        <fieldset>
          <legend>Limits</legend>
          <div class="row">
            <div class="field">
              <label for={`${uid}-timeout`}>Timeout (ms)</label>
              <input
                id={`${uid}-timeout`}
                type="number"
                min={1}
                placeholder="server default (5000)"
                value={timeoutMs}
                aria-invalid={invalid('timeoutMs')}
                onInput={(e) => setTimeoutMs(e.currentTarget.value)}
              />
              <Problems problems={fieldProblems('timeoutMs')} />
            </div>
            <div class="field">
              <label for={`${uid}-memory`}>Memory (MB)</label>
              <input
                id={`${uid}-memory`}
                type="number"
                min={1}
                placeholder="server default (64)"
                value={memoryMb}
                aria-invalid={invalid('memoryMb')}
                onInput={(e) => setMemoryMb(e.currentTarget.value)}
              />
              <Problems problems={fieldProblems('memoryMb')} />
            </div>
          </div>
        </fieldset>
        <div class="row">
          <div class="field">
            <label for={`${uid}-allowed`}>Allowed tools (one per line: built-ins, custom_&lt;id&gt;)</label>
            <textarea
              id={`${uid}-allowed`}
              rows={3}
              value={allowedTools}
              onInput={(e) => setAllowedTools(e.currentTarget.value)}
            />
            <Problems problems={fieldProblems('allowedTools')} />
          </div>
          <div class="field">
            <label for={`${uid}-hosts`}>Network hosts its fetch may reach (one per line)</label>
            <textarea id={`${uid}-hosts`} rows={3} value={hosts} onInput={(e) => setHosts(e.currentTarget.value)} />
            <Problems problems={fieldProblems('network')} />
          </div>
        </div>
        <fieldset>
          <legend>Secrets (write-only: values are never shown)</legend>
          {(record?.secretNames ?? []).map((name) => (
            <div class="row secret" key={name}>
              <label for={`${uid}-secret-${name}`}>
                <code>{name}</code> new value
              </label>
              <input
                id={`${uid}-secret-${name}`}
                type="password"
                autoComplete="off"
                placeholder="unchanged"
                disabled={removedSecrets.includes(name)}
                value={secretValues[name] ?? ''}
                onInput={(e) => setSecretValues({ ...secretValues, [name]: e.currentTarget.value })}
              />
              <label>
                <input
                  type="checkbox"
                  checked={removedSecrets.includes(name)}
                  onChange={(e) =>
                    setRemovedSecrets(
                      e.currentTarget.checked ? [...removedSecrets, name] : removedSecrets.filter((n) => n !== name),
                    )
                  }
                />
                Remove {name}
              </label>
            </div>
          ))}
          {newSecrets.map((secret, index) => (
            <div class="row secret" key={index}>
              <label>
                Name
                <input
                  value={secret.name}
                  autoComplete="off"
                  onInput={(e) =>
                    setNewSecrets(newSecrets.map((s, i) => (i === index ? { ...s, name: e.currentTarget.value } : s)))
                  }
                />
              </label>
              <label>
                Value
                <input
                  type="password"
                  autoComplete="off"
                  value={secret.value}
                  onInput={(e) =>
                    setNewSecrets(newSecrets.map((s, i) => (i === index ? { ...s, value: e.currentTarget.value } : s)))
                  }
                />
              </label>
              <button
                type="button"
                class="small"
                onClick={() => setNewSecrets(newSecrets.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            </div>
          ))}
          <button type="button" class="small" onClick={() => setNewSecrets([...newSecrets, { name: '', value: '' }])}>
            Add a secret
          </button>
          <Problems problems={fieldProblems('secrets')} />
        </fieldset>
        <div class="field" data-field="fixtures">
          <label id={`${uid}-fixtures`}>
            Fixtures:{' '}
            <code>
              [{'{'}name, input, expect{'}'}]
            </code>
            , expect one of <code>{'{value}'}</code>, <code>{'{schema}'}</code>, <code>{'{error: "CODE"}'}</code>
          </label>
          <CodeEditor
            labelId={`${uid}-fixtures`}
            language="json"
            value={fixturesText}
            onChange={setFixturesText}
            minLines={3}
          />
          <label>
            <input
              type="checkbox"
              checked={requireFixtures}
              onChange={(e) => setRequireFixtures(e.currentTarget.checked)}
            />
            Require fixtures: refuse a change or an enable while they fail
          </label>
          <Problems problems={[...fieldProblems('fixtures'), ...fieldProblems('requireFixtures')]} />
        </div>
        <Problems problems={fieldProblems('general')} />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={saving}>
            {saving ? 'Saving…' : record ? 'Save as a new version' : 'Create tool'}
          </button>
          {record && (
            <button type="button" onClick={() => navigate(`/tools/${record.id}`)}>
              Cancel
            </button>
          )}
        </div>
      </form>
      <div>
        {record && record.secretNames.length > 0 && (
          <p class="hint">
            The test panel runs the form as it is, as an unsaved tool: with the secrets typed above only, since stored
            secret values are never sent back. Test the saved tool from its page.
          </p>
        )}
        <TestPanel
          target={{ kind: 'unsaved', tool: toolInput }}
          schema={schemaCheck.problems.length === 0 ? (schemaCheck.schema as JsonObject) : undefined}
        />
      </div>
    </div>
  );
}
