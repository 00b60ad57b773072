// Path routing under /console (the registry answers every /console/* path with index.html).
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The path below /console, `/` at the top. */
export function usePath(): string {
  const read = (): string => location.pathname.slice(BASE.length).replace(/\/+$/, '') || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = (): void => setPath(read());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

/** An in-app link: a real `<a href>` (keyboard, middle-click) whose plain click stays in the page. */
export function onLinkClick(path: string) {
  return (event: MouseEvent): void => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(path);
  };
}
