// The create wizard: describe the tool → the generate endpoint's checked draft → review and edit (the tool form, with
// its test panel) → save.
import { useId, useState } from 'preact/hooks';
import { api, ApiError, errorText } from './api';
import { ToolForm, type ToolDraft } from './tool-form';
import type { GenerateAnswer, Json } from './types';
import { JsonView } from './widgets';

type Step =
  { kind: 'describe' } | { kind: 'review'; answer: GenerateAnswer; note?: string } | { kind: 'edit'; draft: ToolDraft };

export function Wizard() {
  const uid = useId();
  const [step, setStep] = useState<Step>({ kind: 'describe' });
  const [description, setDescription] = useState('');
  const [examples, setExamples] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);

  const generate = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(null);
    const body: { description: string; examples?: Json } = { description };
    if (examples.trim()) {
      try {
        body.examples = JSON.parse(examples) as Json;
      } catch (failure) {
        setError(`Examples are not valid JSON: ${(failure as Error).message}`);
        return;
      }
    }
    setBusy(true);
    try {
      setStep({ kind: 'review', answer: await api<GenerateAnswer>('POST', '/v1/tools/generate', body) });
    } catch (failure) {
      // 422 MODEL_BAD_CODE still carries the draft and its checks: review and fix it by hand.
      const details = failure instanceof ApiError ? (failure.details as Partial<GenerateAnswer> | null) : null;
      if (failure instanceof ApiError && failure.code === 'MODEL_BAD_CODE' && details?.draft && details.checks) {
        setStep({
          kind: 'review',
          answer: { draft: details.draft, checks: details.checks, passed: false, repaired: true },
          note: failure.message,
        });
        return;
      }
      setError(failure instanceof ApiError ? failure : errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  if (step.kind === 'edit') return <ToolForm draft={step.draft} />;
  if (step.kind === 'review') {
    const { draft, checks, passed, repaired } = step.answer;
    const toForm = (): void =>
      setStep({
        kind: 'edit',
        draft: {
          title: draft.title,
          description: draft.description,
          inputSchema: draft.inputSchema,
          code: draft.code,
          // The examples become fixtures, so the saved tool keeps checking what it was generated to do.
          fixtures: draft.examples.map((example, index) => ({
            name: `example ${index + 1}`,
            input: example.input,
            expect: { value: example.output },
          })),
        },
      });
    return (
      <section class="panel wizard" aria-labelledby={`${uid}-h`}>
        <h1 id={`${uid}-h`}>Draft: {draft.title}</h1>
        {step.note && (
          <p class="error" role="alert">
            {step.note}: fix the code by hand below.
          </p>
        )}
        <p class={passed ? 'ok' : 'error'} aria-live="polite">
          {passed ? 'Every check passed' : 'Some checks failed'}
          {repaired && ' (after one repair round)'}
        </p>
        <ul class="checks">
          <li class={checks.schema.passed ? 'ok' : 'error'}>
            Schema: {checks.schema.passed ? 'valid' : checks.schema.message}
          </li>
          <li class={checks.code.passed ? 'ok' : 'error'}>
            Code: {checks.code.passed ? `parses (shape: ${checks.code.shape ?? '?'})` : checks.code.message}
          </li>
        </ul>
        <p>{draft.description}</p>
        <h2>Examples, dry-run in the sandbox</h2>
        <table class="examples">
          <thead>
            <tr>
              <th scope="col">Input</th>
              <th scope="col">Expected</th>
              <th scope="col">Actual</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {checks.examples.map((example, index) => (
              <tr key={index} class={example.passed ? 'ok' : 'error'}>
                <td>
                  <code>{JSON.stringify(example.input)}</code>
                </td>
                <td>
                  <code>{JSON.stringify(example.expected)}</code>
                </td>
                <td>
                  <code>{JSON.stringify(example.actual ?? example.error ?? null)}</code>
                </td>
                <td>{example.passed ? 'passed' : 'failed'}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <details>
          <summary>Schema and code</summary>
          <JsonView label="Input schema" value={draft.inputSchema} />
          <pre class="code">{draft.code}</pre>
        </details>
        <div class="actions">
          <button type="button" class="primary" onClick={toForm}>
            Review, edit and test
          </button>
          <button type="button" onClick={() => setStep({ kind: 'describe' })}>
            Describe it again
          </button>
        </div>
      </section>
    );
  }

  const notConfigured = error instanceof ApiError && error.code === 'GENERATION_NOT_CONFIGURED';
  return (
    <form class="panel wizard" onSubmit={(e) => void generate(e)} aria-labelledby={`${uid}-h`}>
      <h1 id={`${uid}-h`}>Create a tool from a description</h1>
      <div class="field">
        <label for={`${uid}-d`}>What should the tool do?</label>
        <textarea
          id={`${uid}-d`}
          rows={4}
          required
          placeholder="Calculate the compound annual growth rate given a start value, end value and number of years"
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`${uid}-e`}>
          Examples (optional JSON: [{'{'}"input": {'{…}'}, "output": …{'}'}])
        </label>
        <textarea id={`${uid}-e`} rows={3} value={examples} onInput={(e) => setExamples(e.currentTarget.value)} />
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !description.trim()}>
          {busy ? 'Generating… (the model may take a while)' : 'Generate a draft'}
        </button>
      </div>
      {notConfigured ? (
        <div class="error" role="alert">
          <p>
            <strong>Generation is not configured on this server.</strong> {error.message}
          </p>
          <p>Set these on the registry and restart it, with any OpenAI-compatible chat-completions endpoint:</p>
          <pre>
            LLM_BASE_URL=https://api.openai.com/v1{'\n'}LLM_API_KEY=sk-…{'\n'}LLM_MODEL=gpt-4o-mini
          </pre>
          <p>
            Or write the tool yourself: <a href="/console/new">New tool</a>.
          </p>
        </div>
      ) : (
        error && (
          <p class="error" role="alert">
            {error instanceof ApiError ? `${error.code}: ${error.message}` : error}
          </p>
        )
      )}
    </form>
  );
}
