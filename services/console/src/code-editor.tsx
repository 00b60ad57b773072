// A CodeMirror 6 editor as a Preact component: JavaScript or JSON, with lint results shown in the gutter and text.
import { javascript } from '@codemirror/lang-javascript';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'preact/hooks';

export interface CodeEditorProps {
  /** The id of the visible label (aria-labelledby). */
  labelId: string;
  language: 'javascript' | 'json';
  value: string;
  onChange: (value: string) => void;
  /** Extra checks on the text (JSON: parse errors come first, from CodeMirror's JSON linter). */
  check?: (text: string) => Diagnostic[];
  minLines?: number;
}

export function CodeEditor({ labelId, language, value, onChange, check, minLines = 8 }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ onChange, check });
  latest.current = { onChange, check };

  useEffect(() => {
    if (!host.current) return;
    const lint = linter(
      (editor) => {
        const text = editor.state.doc.toString();
        if (language === 'json') {
          const parse = jsonParseLinter()(editor);
          if (parse.length > 0) return parse;
        }
        return latest.current.check?.(text) ?? [];
      },
      { delay: 250 },
    );
    view.current = new EditorView({
      parent: host.current,
      doc: value,
      extensions: [
        basicSetup,
        language === 'json' ? json() : javascript(),
        lintGutter(),
        lint,
        EditorView.contentAttributes.of({ 'aria-labelledby': labelId, 'aria-multiline': 'true' }),
        EditorView.theme({ '.cm-content, .cm-gutter': { minHeight: `${minLines * 1.4}em` } }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) latest.current.onChange(update.state.doc.toString());
        }),
      ],
    });
    return () => view.current?.destroy();
    // Created once: later values arrive through the effect below, handlers through `latest`.
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div class="editor" ref={host} data-language={language} />;
}
