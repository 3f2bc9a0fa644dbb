/**
 * Where Standoff's own files are, whichever way it runs: from the TypeScript sources (tests, tsx,
 * the bin's fallback), from the bundle in `dist/` (what `standoff` runs), or installed under
 * `node_modules/standoff/`. Code must not locate shipped files relative to its own module
 * (`new URL('../../scenarios', import.meta.url)`): in the bundle, a module's code lives in a chunk
 * at another depth. Use these instead:
 *
 * - {@link packagePath}: a file or directory shipped with the package (`scenarios/`,
 *   `assets/fonts/`, `notebooks/`; see `files` in package.json).
 * - {@link workerUrl}: the entry of a worker thread (see its comment for the pattern to copy).
 *
 * @example
 * packagePath('scenarios'); // '/…/standoff/scenarios'
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

let root: string | null = null;

/** The package's root directory: the nearest ancestor of this module holding a package.json. */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`standoff: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  root = dir;
  return dir;
}

/** A path inside the package (`packagePath('assets', 'fonts')`). */
export const packagePath = (...parts: string[]): string => join(packageRoot(), ...parts);

/** True when this code runs from the TypeScript sources rather than the compiled bundle. */
export const runsFromSources = (): boolean => import.meta.url.endsWith('.ts');

/**
 * The entry of a worker thread. A worker thread does not inherit the TypeScript loader of its
 * parent, so a worker has two entries:
 * - compiled: `dist/workers/<name>.js`, built from the worker's TypeScript entry, which must be
 *   listed under the same name in `WORKERS` in `scripts/build.mjs`;
 * - from sources: a plain-JavaScript boot file next to the worker that registers tsx and imports
 *   the TypeScript entry (see `src/runner/sim/worker-boot.mjs`).
 *
 * The pattern to copy (`tests/cli/build.test.ts` checks that every `workerUrl` name is built):
 *
 * ```ts
 * const entry = workerUrl('sim-worker', new URL('./worker-boot.mjs', import.meta.url));
 * new Worker(entry, { execArgv: [] });
 * ```
 */
export function workerUrl(name: string, sourceBoot: URL): URL {
  return runsFromSources() ? sourceBoot : pathToFileURL(packagePath('dist', 'workers', `${name}.js`));
}
