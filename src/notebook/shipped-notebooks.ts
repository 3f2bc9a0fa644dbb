/**
 * The notebooks shipped with Standoff (`notebooks/` in the package): listed by
 * `standoff notebook list`, and runnable by name from any directory
 * (`standoff notebook run hasty-without-evidence`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packagePath } from '../paths.ts';

/** The shipped notebooks: name, title (first heading) and path. */
export function listShippedNotebooks(): { name: string; title: string; path: string }[] {
  const dir = packagePath('notebooks');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      const title = /^#\s+(.+)$/m.exec(readFileSync(path, 'utf8'))?.[1]?.trim() ?? '';
      return { name: basename(f, '.md'), title, path };
    });
}

/**
 * A notebook argument as a path: the file when it exists; otherwise the shipped notebook of that
 * name (`judge-disagreement`, `judge-disagreement.md` or `notebooks/judge-disagreement.md`);
 * otherwise the argument unchanged (reading it then fails with `notebook.unreadable`).
 */
export function resolveNotebook(file: string): string {
  if (existsSync(file)) return file;
  const name = basename(file).replace(/\.md$/i, '');
  const shipped = packagePath('notebooks', `${name}.md`);
  return existsSync(shipped) ? shipped : file;
}
