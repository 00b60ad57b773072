// Small shared pieces: copy button, JSON view, error lists, conditional rendering.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { FieldProblem } from './api';

export function when<T>(value: T | null | undefined, render: (value: T) => ComponentChildren): ComponentChildren {
  return value === null || value === undefined ? null : render(value);
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = (): void => {
    // The clipboard may be refused (permissions, an insecure origin): say so instead of failing silently.
    navigator.clipboard.writeText(text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button type="button" class="small" aria-label={label} onClick={copy}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : 'Copy'}
    </button>
  );
}

export function JsonView({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** Field problems as a list; each names the JSON pointer the server (or the checker) gave. */
export function Problems({ problems, id }: { problems: FieldProblem[]; id?: string }) {
  if (problems.length === 0) return null;
  return (
    <ul class="problems" id={id} role="alert">
      {problems.map((problem, index) => (
        <li key={index}>
          {problem.path && <code>{problem.path}</code>} {problem.message}
          {problem.line !== undefined &&
            ` (line ${problem.line}${problem.column === undefined ? '' : `, column ${problem.column}`})`}
        </li>
      ))}
    </ul>
  );
}

export function ErrorMessage({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}
