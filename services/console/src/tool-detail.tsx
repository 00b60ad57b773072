// One tool: status with enable/disable, the test panel, versions with a diff and rollback, recent invocations, the
// audit log, delete.
import type { ComponentChild } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { api, ApiError, errorText } from './api';
import { lineDiff } from './line-diff';
import { navigate, onLinkClick } from './router';
import { TestPanel } from './test-panel';
import type { AuditItem, InvocationLogItem, Page, ToolRecord, ToolVersion } from './types';
import { CopyButton, ErrorMessage, Problems } from './widgets';

export function ToolDetail({ id }: { id: string }) {
  const [tool, setTool] = useState<ToolRecord | null>(null);
  const [versions, setVersions] = useState<number[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    setError(null);
    Promise.all([
      api<ToolRecord>('GET', `/v1/tools/${id}`),
      api<{ items: { version: number }[] }>('GET', `/v1/tools/${id}/versions`),
    ]).then(
      ([record, list]) => {
        setTool(record);
        setVersions(list.items.map((item) => item.version));
      },
      (failure: unknown) => setError(errorText(failure)),
    );
  }, [id, refresh]);

  const reload = (): void => setRefresh((n) => n + 1);

  if (error && !tool) return <ErrorMessage error={error} />;
  if (!tool) return <p aria-live="polite">Loading…</p>;
  return (
    <div class="detail">
      <div class="toolbar">
        <h1>{tool.title}</h1>
        <span class={`badge ${tool.status}`}>{tool.status}</span>
      </div>
      <p class="tool-name">
        <code>{tool.toolName}</code> <CopyButton text={tool.toolName} label={`Copy ${tool.toolName}`} /> · version{' '}
        {tool.version} · used {tool.usageCount} times · {tool.failureCount} consecutive failures
      </p>
      <p>{tool.description}</p>
      <StatusPanel tool={tool} onChange={reload} />
      <div class="actions">
        <a class="button" href={`/console/tools/${tool.id}/edit`} onClick={onLinkClick(`/tools/${tool.id}/edit`)}>
          Edit
        </a>
        <DeleteButton tool={tool} />
      </div>
      <TestPanel key={tool.version} target={{ kind: 'saved', id: tool.id, versions }} schema={tool.inputSchema} />
      <Versions tool={tool} versions={versions} onRollback={reload} />
      <Paged<InvocationLogItem>
        key={`inv-${refresh}`}
        title="Recent invocations"
        path={`/v1/tools/${tool.id}/invocations`}
        empty="No invocations yet (dry runs are in the audit log)."
        render={(item) => (
          <li key={item.id} class={item.status === 'failed' ? 'error' : ''}>
            <time dateTime={item.startedAt}>{new Date(item.startedAt).toLocaleString()}</time> · v{item.version} ·{' '}
            <strong>{item.status}</strong>
            {item.durationMs !== null && <> · {item.durationMs} ms</>}
            {item.error && (
              <>
                {' '}
                · <code>{item.error.code}</code> {item.error.message}
              </>
            )}
          </li>
        )}
      />
      <Paged<AuditItem>
        key={`audit-${refresh}`}
        title="Audit log"
        path={`/v1/tools/${tool.id}/audit`}
        empty="No events."
        render={(item) => (
          <li key={item.id}>
            <time dateTime={item.createdAt}>{new Date(item.createdAt).toLocaleString()}</time> ·{' '}
            <strong>{item.event}</strong> by <code>{item.actor}</code>
            {item.data !== null && <code class="data"> {JSON.stringify(item.data)}</code>}
          </li>
        )}
      />
    </div>
  );
}

/** Enable/disable. A disabled tool shows why and its last error first; enabling says it resets the failure count. */
function StatusPanel({ tool, onChange }: { tool: ToolRecord; onChange: () => void }) {
  const uid = useId();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [failing, setFailing] = useState<{ name: string; message: string }[]>([]);
  const [busy, setBusy] = useState(false);
  const act = async (path: string, body?: unknown): Promise<void> => {
    setBusy(true);
    setError(null);
    setFailing([]);
    try {
      await api('POST', path, body);
      onChange();
    } catch (failure) {
      setError(errorText(failure));
      // 409 FIXTURES_FAILED: a tool that requires its fixtures is not enabled while they fail.
      if (failure instanceof ApiError) {
        const list = (failure.details as { failing?: unknown } | null)?.failing;
        if (Array.isArray(list)) setFailing(list as { name: string; message: string }[]);
      }
    } finally {
      setBusy(false);
    }
  };
  if (tool.status === 'disabled') {
    return (
      <section class="panel disabled-panel" aria-labelledby={`${uid}-h`}>
        <h2 id={`${uid}-h`}>This tool is disabled</h2>
        <p class="disabled-reason">
          <strong>Reason:</strong> {tool.disabledReason ?? 'no reason given'}
        </p>
        <div class="last-error">
          <strong>Last error:</strong>
          <pre>{tool.lastError ?? 'none recorded'}</pre>
        </div>
        <p>Re-enabling makes agents able to call it again and resets the failure count to 0.</p>
        <button type="button" class="primary" disabled={busy} onClick={() => void act(`/v1/tools/${tool.id}/enable`)}>
          Re-enable
        </button>
        <ErrorMessage error={error} />
        <Problems problems={failing.map((f) => ({ path: `fixture “${f.name}”`, message: f.message }))} />
      </section>
    );
  }
  return (
    <section class="panel" aria-labelledby={`${uid}-h`}>
      <h2 id={`${uid}-h`}>Status: active</h2>
      {tool.lastError && (
        <details class="last-error">
          <summary>Last error</summary>
          <pre>{tool.lastError}</pre>
        </details>
      )}
      <div class="row">
        <label>
          Reason to disable (optional)
          <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <button
          type="button"
          disabled={busy}
          onClick={() => void act(`/v1/tools/${tool.id}/disable`, reason ? { reason } : {})}
        >
          Disable
        </button>
      </div>
      <ErrorMessage error={error} />
    </section>
  );
}

function DeleteButton({ tool }: { tool: ToolRecord }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async (): Promise<void> => {
    try {
      await api('DELETE', `/v1/tools/${tool.id}`);
      navigate('/');
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  if (!confirming) {
    return (
      <button type="button" class="danger" onClick={() => setConfirming(true)}>
        Delete…
      </button>
    );
  }
  return (
    <div class="confirm" role="alertdialog" aria-label="Confirm delete">
      <p>
        Delete <strong>{tool.title}</strong>? Agents can no longer call it; its audit log stays.
      </p>
      <button type="button" class="danger" onClick={() => void remove()}>
        Yes, delete it
      </button>
      <button type="button" autoFocus onClick={() => setConfirming(false)}>
        Cancel
      </button>
      <ErrorMessage error={error} />
    </div>
  );
}

/** A version as text for the diff: the code, then every other field as JSON. */
function versionText(version: ToolVersion): string {
  const { code, version: _n, createdAt: _c, codeSha256: _s, ...rest } = version;
  return `${code}\n\n// ---- definition ----\n${JSON.stringify(rest, null, 2)}`;
}

function Versions({ tool, versions, onRollback }: { tool: ToolRecord; versions: number[]; onRollback: () => void }) {
  const uid = useId();
  const [from, setFrom] = useState(String(Math.max(1, tool.version - 1)));
  const [to, setTo] = useState(String(tool.version));
  const [diff, setDiff] = useState<ReturnType<typeof lineDiff> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [rollbackTo, setRollbackTo] = useState<number | null>(null);

  const compare = async (): Promise<void> => {
    setError(null);
    try {
      const [a, b] = await Promise.all([
        api<ToolVersion>('GET', `/v1/tools/${tool.id}/versions/${from}`),
        api<ToolVersion>('GET', `/v1/tools/${tool.id}/versions/${to}`),
      ]);
      setDiff(lineDiff(versionText(a), versionText(b)));
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const rollback = async (version: number): Promise<void> => {
    setError(null);
    try {
      await api('POST', `/v1/tools/${tool.id}/rollback`, { version });
      setRollbackTo(null);
      onRollback();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const select = (value: string, set: (v: string) => void, label: string) => (
    <label>
      {label}
      <select value={value} onChange={(e) => set(e.currentTarget.value)}>
        {versions.map((n) => (
          <option key={n} value={String(n)}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
  const changed = diff?.filter((line) => line.kind !== 'same').length ?? 0;
  return (
    <section class="panel" aria-labelledby={`${uid}-h`}>
      <h2 id={`${uid}-h`}>Versions</h2>
      <ul class="versions">
        {[...versions].reverse().map((n) => (
          <li key={n}>
            Version {n}
            {n === tool.version ? (
              <em> (current)</em>
            ) : rollbackTo === n ? (
              <span class="confirm">
                {' '}
                Make version {n}'s definition current as version {tool.version + 1}?{' '}
                <button type="button" class="small primary" onClick={() => void rollback(n)}>
                  Yes, roll back
                </button>
                <button type="button" class="small" onClick={() => setRollbackTo(null)}>
                  Cancel
                </button>
              </span>
            ) : (
              <button type="button" class="small" onClick={() => setRollbackTo(n)}>
                Roll back to {n}
              </button>
            )}
          </li>
        ))}
      </ul>
      {versions.length > 1 && (
        <div class="row">
          {select(from, setFrom, 'Compare version')}
          {select(to, setTo, 'with version')}
          <button type="button" onClick={() => void compare()}>
            Show diff
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
      {diff && (
        <div>
          <p aria-live="polite">
            Version {from} → {to}: {changed === 0 ? 'no differences' : `${changed} lines changed`}
          </p>
          <pre class="diff" tabIndex={0} aria-label={`Diff of version ${from} and ${to}`}>
            {diff.map((line, index) => (
              <div key={index} class={`diff-${line.kind}`}>
                {line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  '}
                {line.text}
              </div>
            ))}
          </pre>
        </div>
      )}
    </section>
  );
}

/** A newest-first list with "Load older" paging on `nextCursor` (audit log, invocation log). */
// T ties the answer's items to what `render` takes; callers name it.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- see above
function Paged<T>({
  title,
  path,
  empty,
  render,
}: {
  title: string;
  path: string;
  empty: string;
  render: (item: T) => ComponentChild;
}) {
  const uid = useId();
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = (after: string | null): void => {
    setError(null);
    const query = `?limit=20${after ? `&cursor=${encodeURIComponent(after)}` : ''}`;
    api<Page<T>>('GET', path + query).then(
      (page) => {
        setItems((previous) => [...(after ? (previous ?? []) : []), ...page.items]);
        setCursor(page.nextCursor);
      },
      (failure: unknown) => setError(errorText(failure)),
    );
  };
  useEffect(() => load(null), [path]);
  return (
    <section class="panel" aria-labelledby={`${uid}-h`}>
      <div class="toolbar">
        <h2 id={`${uid}-h`}>{title}</h2>
        <button type="button" class="small" onClick={() => load(null)}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={error} />
      {items?.length === 0 && <p class="hint">{empty}</p>}
      <ul class="log">{items?.map(render)}</ul>
      {cursor && (
        <button type="button" onClick={() => load(cursor)}>
          Load older
        </button>
      )}
    </section>
  );
}
