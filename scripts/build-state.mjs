/**
 * Is the compiled CLI in dist/ current? `scripts/build.mjs` records every file it bundled (the
 * project's sources, the build script itself, package-lock.json) with its mtime and size in
 * `dist/build-info.json`; the build is current when every recorded file still has them. A source
 * that is new is reachable only through an import added to a recorded file, so it is covered too.
 * Used by `bin/standoff.js` (in a checkout, to fall back to the sources when the build is stale),
 * by `scripts/build.mjs --if-stale` and so by the tests' global setup. Plain JavaScript: it runs
 * before any TypeScript loader exists.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const BUILD_INFO = 'build-info.json';

/** `{ current: true }`, or `{ current: false, reason }` naming the first file that changed. */
export function buildState(root) {
  let info;
  try {
    info = JSON.parse(readFileSync(join(root, 'dist', BUILD_INFO), 'utf8'));
  } catch {
    return { current: false, reason: 'dist/ has no build (run npm run build)' };
  }
  for (const [file, [mtimeMs, size]] of Object.entries(info.inputs ?? {})) {
    let st;
    try {
      st = statSync(join(root, file));
    } catch {
      return { current: false, reason: `${file} is gone` };
    }
    if (st.mtimeMs !== mtimeMs || st.size !== size) return { current: false, reason: `${file} changed since the build` };
  }
  return { current: true };
}
