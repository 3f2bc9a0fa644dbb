#!/usr/bin/env node
// The `standoff` command. It runs the compiled CLI, dist/cli.js (built by `npm run build`, which
// `npm ci`, `npm install` and `npm pack` run through the `prepare` script): plain JavaScript, no
// TypeScript compilation at start-up.
//
// In a checkout (src/ next to dist/), it first checks that the build is current: when dist/ is
// missing or any bundled source changed since the build (scripts/build-state.mjs), it runs the
// TypeScript sources through tsx instead, so a command never runs stale code. STANDOFF_FROM_SOURCE=1
// forces the sources. An installed package has no src/ and always runs dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'cli.js');
const sources = join(root, 'src', 'cli', 'bin.ts');

async function useSources() {
  if (!existsSync(sources)) return false;
  if (process.env.STANDOFF_FROM_SOURCE === '1' || !existsSync(compiled)) return true;
  const { buildState } = await import(pathToFileURL(join(root, 'scripts', 'build-state.mjs')).href);
  return !buildState(root).current;
}

if (await useSources()) {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('standoff: dist/ is missing or older than src/ and tsx is not installed: run `npm ci` (or `npm run build`)\n');
    process.exit(1);
  }
  register();
  await import(pathToFileURL(sources).href);
} else {
  await import(pathToFileURL(compiled).href);
}
