/**
 * Vitest global setup: tests that spawn `bin/standoff.js` must exercise the current sources, so the
 * compiled CLI in dist/ is rebuilt first when any source changed since the last build
 * (`scripts/build.mjs --if-stale`; a no-op right after `npm ci`). The bin would fall back to the
 * sources anyway (see bin/standoff.js), but through tsx every spawn would pay for compiling
 * TypeScript, and the tests would not cover what ships.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export default function setup(): void {
  const root = join(import.meta.dirname, '..');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed before the tests:\n${r.stderr}${r.stdout}`);
  if (r.stderr.trim()) process.stderr.write(`global setup: ${r.stderr}`);
}
