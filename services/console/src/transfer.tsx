// Import (a TradingGoose export file, or a pi extension module) and export (a TradingGoose file download).
import { useId, useState } from 'preact/hooks';
import { api, ApiError, errorText, apiKey, type FieldProblem } from './api';
import { onLinkClick } from './router';
import { ErrorMessage, Problems } from './widgets';

interface ImportResult {
  imported: { id: string; title: string; toolName: string }[];
  renamed: number;
}

const normalize = (title: string): string => title.replace(/\s+/g, ' ').trim();

/** The file as the import body: a TradingGoose file as it is, anything else as a pi module's source. */
function importBody(text: string): { body: unknown; titles: string[] } {
  try {
    const parsed = JSON.parse(text) as { fileType?: unknown; customTools?: { title?: unknown }[] };
    if (parsed.fileType === 'tradingGooseExport') {
      const titles = (parsed.customTools ?? []).map((tool) =>
        typeof tool.title === 'string' ? normalize(tool.title) : '',
      );
      return { body: parsed, titles };
    }
  } catch {
    // Not JSON: a module.
  }
  return { body: { format: 'pi', module: text }, titles: [] };
}

export function Transfer() {
  const uid = useId();
  const [file, setFile] = useState<File | null>(null);
  const [result, setResult] = useState<{ answer: ImportResult; titles: string[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [busy, setBusy] = useState(false);
  const [exported, setExported] = useState<string | null>(null);

  const upload = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (!file) return;
    setError(null);
    setProblems([]);
    setResult(null);
    setBusy(true);
    try {
      const { body, titles } = importBody(await file.text());
      setResult({ answer: await api<ImportResult>('POST', '/v1/tools/import', body), titles });
    } catch (failure) {
      setError(`Nothing was imported: ${errorText(failure)}`);
      if (failure instanceof ApiError) setProblems(failure.problems);
    } finally {
      setBusy(false);
    }
  };

  const download = async (): Promise<void> => {
    setError(null);
    try {
      const response = await fetch('/v1/tools/export', { headers: { authorization: `Bearer ${apiKey.get() ?? ''}` } });
      if (!response.ok) throw new Error(`export failed: HTTP ${response.status}`);
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `toolhost-export-${new Date().toISOString().slice(0, 10)}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setExported(`${link.download} (${blob.size} bytes)`);
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <div class="transfer">
      <form class="panel" onSubmit={(e) => void upload(e)} aria-labelledby={`${uid}-i`}>
        <h1 id={`${uid}-i`}>Import tools</h1>
        <p class="hint">
          A TradingGoose export file (JSON), or a pi extension module (JavaScript). All of it is imported or none; a
          title already in use gets “(imported) N”.
        </p>
        <div class="field">
          <label for={`${uid}-f`}>File</label>
          <input
            id={`${uid}-f`}
            type="file"
            accept=".json,.js,.mjs,.ts,application/json,text/javascript"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={!file || busy}>
            {busy ? 'Importing…' : 'Import'}
          </button>
        </div>
        <ErrorMessage error={error} />
        <Problems problems={problems} />
        {result && (
          <div class="import-result" aria-live="polite">
            <p class="ok">
              Imported {result.answer.imported.length} tools; {result.answer.renamed} renamed.
            </p>
            <ul>
              {result.answer.imported.map((tool, index) => {
                const original = result.titles[index];
                return (
                  <li key={tool.id}>
                    <a href={`/console/tools/${tool.id}`} onClick={onLinkClick(`/tools/${tool.id}`)}>
                      {tool.title}
                    </a>{' '}
                    <code>{tool.toolName}</code>
                    {original !== undefined && original !== tool.title && (
                      <span class="renamed"> (renamed from “{original}”: that title was in use)</span>
                    )}
                  </li>
                );
              })}
            </ul>
          </div>
        )}
      </form>
      <section class="panel" aria-labelledby={`${uid}-x`}>
        <h2 id={`${uid}-x`}>Export</h2>
        <p class="hint">Every tool of this tenant as a TradingGoose export file (secrets are never exported).</p>
        <button type="button" onClick={() => void download()}>
          Download export
        </button>
        {exported && <p aria-live="polite">Downloaded {exported}</p>}
      </section>
    </div>
  );
}
