// The console's shell: the API key prompt (kept in session storage only), navigation, and the routes.
import { render } from 'preact';
import { useEffect, useErrorBoundary, useState } from 'preact/hooks';
import { api, apiKey, ApiError, errorText } from './api';
import { navigate, onLinkClick, usePath } from './router';
import { ToolDetail } from './tool-detail';
import { ToolForm } from './tool-form';
import { ToolsList } from './tools-list';
import { Transfer } from './transfer';
import type { ToolRecord } from './types';
import { Wizard } from './wizard';
import { ErrorMessage } from './widgets';
import './styles.css';

function KeyPrompt({ onKey }: { onKey: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    apiKey.set(key.trim());
    try {
      await api('GET', '/v1/tools');
      onKey();
    } catch (failure) {
      apiKey.clear();
      setError(
        failure instanceof ApiError && failure.status === 403
          ? 'This key cannot read tools: the console needs a tenant key with tools:read (and tools:write to change them).'
          : errorText(failure),
      );
    }
  };
  return (
    <main class="key-prompt">
      <form class="panel" onSubmit={(e) => void submit(e)}>
        <h1>toolhost · Custom Tools</h1>
        <p>
          Enter a tenant API key. It is kept in this tab's session storage only and sent to this registry's API as a
          bearer token.
        </p>
        <div class="field">
          <label for="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </div>
        <button type="submit" class="primary" disabled={!key.trim()}>
          Open the console
        </button>
        <ErrorMessage error={error} />
      </form>
    </main>
  );
}

const NAV = [
  ['/', 'Tools'],
  ['/new', 'New tool'],
  ['/wizard', 'Wizard'],
  ['/transfer', 'Import / export'],
] as const;

function EditTool({ id }: { id: string }) {
  const [tool, setTool] = useState<ToolRecord | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<ToolRecord>('GET', `/v1/tools/${id}`).then(setTool, (failure: unknown) => setError(errorText(failure)));
  }, [id]);
  if (error) return <ErrorMessage error={error} />;
  return tool ? <ToolForm key={`${tool.id}-${tool.version}`} record={tool} /> : <p aria-live="polite">Loading…</p>;
}

/** A page that throws shows what went wrong instead of leaving the console blank. */
function Guarded({ path }: { path: string }) {
  const [error, reset] = useErrorBoundary() as [unknown, () => void];
  if (error) {
    return (
      <div class="error" role="alert">
        <p>This page failed: {errorText(error)}</p>
        <button type="button" onClick={reset}>
          Try again
        </button>
      </div>
    );
  }
  return <Page path={path} />;
}

function Page({ path }: { path: string }) {
  const edit = /^\/tools\/([^/]+)\/edit$/.exec(path);
  if (edit?.[1]) return <EditTool id={edit[1]} />;
  const detail = /^\/tools\/([^/]+)$/.exec(path);
  if (detail?.[1]) return <ToolDetail key={detail[1]} id={detail[1]} />;
  switch (path) {
    case '/':
    case '/tools':
      return <ToolsList />;
    case '/new':
      return <ToolForm key="new" />;
    case '/wizard':
      return <Wizard />;
    case '/transfer':
      return <Transfer />;
    default:
      return (
        <p>
          No such page.{' '}
          <a href="/console/" onClick={onLinkClick('/')}>
            Back to the tools
          </a>
          .
        </p>
      );
  }
}

function App() {
  const [hasKey, setHasKey] = useState(apiKey.get() !== null);
  const path = usePath();
  // Focus the page's heading after navigation, so keyboard and screen reader users land on the new content.
  useEffect(() => {
    const heading = document.querySelector<HTMLElement>('main h1');
    heading?.setAttribute('tabindex', '-1');
    heading?.focus();
  }, [path]);
  if (!hasKey) return <KeyPrompt onKey={() => setHasKey(true)} />;
  const signOut = (): void => {
    apiKey.clear();
    setHasKey(false);
    navigate('/');
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong class="brand">toolhost</strong>
        <nav aria-label="Console">
          {NAV.map(([to, label]) => (
            <a
              key={to}
              href={`/console${to}`}
              aria-current={path === to ? 'page' : undefined}
              onClick={onLinkClick(to)}
            >
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="small" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Guarded key={path} path={path} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
