/**
 * The files under a directory, for the ingests that take one (`ingest inspect DIR`, `ingest
 * lm-eval DIR`). Symlinks are followed, each directory once (by device and inode), so a symlink
 * cycle ends instead of recursing until ELOOP; an entry that cannot be resolved (a symlink loop, a
 * dangling link, no permission) is a data error naming it when the ingest would have read it
 * (`relevant`), and skipped otherwise.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dataError } from '../errors.ts';

export interface DirTreeOptions {
  /** Whether the ingest reads a file of this name (an unreadable one is then an error). */
  relevant: (name: string) => boolean;
  /** Skip names starting with a dot (files and directories). */
  skipHidden?: boolean;
}

function unreadable(path: string, what: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'ELOOP' ? 'symlink loop (ELOOP)' : code === 'ENOENT' ? 'a dangling symlink (ENOENT)' : (code ?? (err as Error).message);
  return dataError('ingest.unreadable', `${path}: cannot read the ${what}: ${why}`, err);
}

/** Directory -> its regular files' names (sorted), for every directory under `root` that holds one. */
export function loadDirTree(root: string, opts: DirTreeOptions): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (dir: string) => {
    let names: string[];
    try {
      const st = statSync(dir);
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) return;
      seen.add(id);
      names = readdirSync(dir).sort();
    } catch (err) {
      throw unreadable(dir, 'directory', err);
    }
    const files: string[] = [];
    for (const name of names) {
      if (opts.skipHidden && name.startsWith('.')) continue;
      const full = join(dir, name);
      let entry;
      try {
        entry = statSync(full);
      } catch (err) {
        if (!opts.relevant(name)) continue;
        throw unreadable(full, 'file', err);
      }
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.push(name);
    }
    if (files.length > 0) out.set(dir, files);
  };
  walk(root);
  return out;
}
