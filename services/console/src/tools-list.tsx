// The tools list: every tool of the tenant with its status, counters, last error and version; filters; copy button.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, errorText } from './api';
import { onLinkClick } from './router';
import type { ToolRecord } from './types';
import { CopyButton, when } from './widgets';

type StatusFilter = 'all' | 'active' | 'disabled';

export function ToolsList() {
  const [tools, setTools] = useState<ToolRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<StatusFilter>('all');
  const [text, setText] = useState('');

  const load = (): void => {
    setError(null);
    api<{ items: ToolRecord[] }>('GET', '/v1/tools').then(
      (answer) => setTools(answer.items),
      (failure: unknown) => setError(errorText(failure)),
    );
  };
  useEffect(load, []);

  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return (tools ?? [])
      .filter((tool) => status === 'all' || tool.status === status)
      .filter(
        (tool) =>
          !needle ||
          [tool.title, tool.description, tool.toolName].some((field) => field.toLowerCase().includes(needle)),
      )
      .sort((a, b) => (a.status === b.status ? a.title.localeCompare(b.title) : a.status === 'disabled' ? -1 : 1));
  }, [tools, status, text]);

  const disabledCount = (tools ?? []).filter((tool) => tool.status === 'disabled').length;

  return (
    <section aria-labelledby="tools-heading">
      <div class="toolbar">
        <h1 id="tools-heading">Custom tools</h1>
        <button type="button" onClick={load}>
          Refresh
        </button>
      </div>
      <div class="filters" role="search">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as StatusFilter)}>
            <option value="all">All</option>
            <option value="active">Active</option>
            <option value="disabled">Disabled</option>
          </select>
        </label>
        <label>
          Search
          <input
            type="search"
            value={text}
            placeholder="title, description or custom_…"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
      </div>
      {when(error, (message) => (
        <p class="error" role="alert">
          {message}
        </p>
      ))}
      {tools === null && !error && <p aria-live="polite">Loading…</p>}
      {tools !== null && (
        <p class="summary" aria-live="polite">
          {tools.length} tools, {disabledCount} disabled; {shown.length} shown
        </p>
      )}
      {tools?.length === 0 && (
        <p>
          No tools yet:{' '}
          <a href="/console/new" onClick={onLinkClick('/new')}>
            create one
          </a>
          ,{' '}
          <a href="/console/wizard" onClick={onLinkClick('/wizard')}>
            describe one to the wizard
          </a>{' '}
          or{' '}
          <a href="/console/transfer" onClick={onLinkClick('/transfer')}>
            import a file
          </a>
          .
        </p>
      )}
      <ul class="tool-list">
        {shown.map((tool) => (
          <ToolRow key={tool.id} tool={tool} />
        ))}
      </ul>
    </section>
  );
}

function ToolRow({ tool }: { tool: ToolRecord }) {
  const disabled = tool.status === 'disabled';
  return (
    <li class={`tool-card${disabled ? ' disabled' : ''}`} data-tool-id={tool.id}>
      <div class="tool-head">
        <a class="tool-title" href={`/console/tools/${tool.id}`} onClick={onLinkClick(`/tools/${tool.id}`)}>
          {tool.title}
        </a>
        <span class={`badge ${tool.status}`}>{tool.status}</span>
      </div>
      <div class="tool-name">
        <code>{tool.toolName}</code>
        <CopyButton text={tool.toolName} label={`Copy ${tool.toolName}`} />
      </div>
      {disabled && (
        <p class="disabled-reason">
          <strong>Disabled:</strong> {tool.disabledReason ?? 'no reason given'}
        </p>
      )}
      <dl class="stats">
        <div>
          <dt>Usage</dt>
          <dd>{tool.usageCount}</dd>
        </div>
        <div>
          <dt>Consecutive failures</dt>
          <dd>{tool.failureCount}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>{tool.lastUsedAt ? new Date(tool.lastUsedAt).toLocaleString() : 'never'}</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{tool.version}</dd>
        </div>
      </dl>
      {tool.lastError && (
        <details class="last-error">
          <summary>Last error</summary>
          <pre>{tool.lastError}</pre>
        </details>
      )}
    </li>
  );
}
