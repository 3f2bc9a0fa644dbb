#!/usr/bin/env node
/**
 * `npm run build` (also run by `npm ci` / `npm install` through `prepare`, and by `npm pack`):
 * compiles the CLI into `dist/` with esbuild, so `standoff` runs JavaScript and never compiles
 * TypeScript at start-up.
 *
 * - One ESM bundle for Node 20 with code splitting: `dist/cli.js` holds commander and the command
 *   definitions; every `await import(...)` inside a command's action becomes a chunk in
 *   `dist/chunks/` that loads only when that command runs (see src/cli/main.ts).
 * - Pure-JS dependencies are bundled (commander, zod, @stdlib, DuckDB's JavaScript API, Arrow):
 *   @stdlib's beta quantile alone is ~850 CommonJS files and @duckdb/node-api ~300, too slow to
 *   resolve at every start. Native addons, and large packages only one command uses, stay external
 *   and load from node_modules when that command imports them (EXTERNAL below).
 * - Worker threads: each entry in WORKERS becomes `dist/workers/<name>.js`; code starts it through
 *   `workerUrl(name, bootUrl)` from src/paths.ts. Add a worker here under the name it uses there.
 * - Files are written to temp names and renamed, chunks before the entries that import them, and
 *   `dist/build-info.json` last (what `scripts/build-state.mjs` checks). Chunks of earlier builds
 *   are removed once they are 10 minutes old, so a process started before a rebuild still finds
 *   the chunks it imports.
 *
 * `--if-stale`: build only when dist/ is missing or older than the sources (`prepare`, the tests'
 * setup). `--clean`: empty dist/ first (`prepack`, so a package holds no chunk of an older build).
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { BUILD_INFO, buildState } from './build-state.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');

/** Worker thread entries: name (as passed to `workerUrl`) -> TypeScript entry. */
export const WORKERS = {
  'sim-worker': 'src/runner/sim/worker.ts',
  'bootstrap-worker': 'src/compute/bootstrap-worker.ts',
  'inspect-worker': 'src/ingest/inspect/worker.ts',
};

/** Loaded from node_modules at run time: native addons, and large packages only some commands use. */
// apache-arrow stays external too: its package.json says `sideEffects: false`, so a bundle drops the
// side-effect import in Arrow.node.mjs that registers Node streams (`toNodeStream`, `--out .arrow`).
export const EXTERNAL = ['@duckdb/node-bindings', '@resvg/resvg-js', 'vega', 'vega-lite', 'openai', 'tsx', 'apache-arrow'];

const STALE_CHUNK_MS = 10 * 60 * 1000;

/**
 * zod re-exports all of its ~40 message locales (`z.locales`), more than half of its code; Standoff
 * uses English messages only, so the bundle's `z.locales` holds `en` alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (args.importer.includes(`${sep}node_modules${sep}zod${sep}`) ? { path: 'zod-locales', namespace: 'zod-en' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, () => ({ contents: "export { default as en } from 'zod/v4/locales/en.js';", resolveDir: ROOT }));
  },
};

export async function build({ quiet = false } = {}) {
  const started = Date.now();
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { cli: 'src/cli/bin.ts', ...Object.fromEntries(Object.entries(WORKERS).map(([n, f]) => [`workers/${n}`, f])) },
    outdir: DIST,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    chunkNames: 'chunks/[name]-[hash]',
    // Bundled CommonJS dependencies may require() Node built-ins; ESM has no require of its own.
    banner: { js: "import { createRequire as __standoffRequire } from 'node:module'; const require = __standoffRequire(import.meta.url);" },
    metafile: true,
    plugins: [zodEnglishOnly],
    // Less to parse at every start; identifiers keep their names, so stack traces stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(join(DIST, 'chunks'), { recursive: true });
  const written = new Set();
  const outputs = [...result.outputFiles].sort((a, b) => rank(a.path) - rank(b.path));
  for (const f of outputs) {
    mkdirSync(dirname(f.path), { recursive: true });
    const tmp = `${f.path}.tmp-${process.pid}`;
    writeFileSync(tmp, f.contents);
    renameSync(tmp, f.path);
    written.add(f.path);
  }
  // Sources bundled (not node_modules) plus what else decides the output.
  const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules') && !f.includes(':')); // not virtual modules
  const record = {};
  for (const f of [...inputs, 'scripts/build.mjs', 'package-lock.json'].sort()) {
    const st = statSync(join(ROOT, f));
    // A file changed while esbuild read it must count as stale next time: record an impossible mtime.
    record[f.split(sep).join('/')] = [st.mtimeMs >= started ? -1 : st.mtimeMs, st.size];
  }
  writeFileSync(join(DIST, 'meta.json'), JSON.stringify(result.metafile));
  const info = join(DIST, BUILD_INFO);
  writeFileSync(`${info}.tmp-${process.pid}`, JSON.stringify({ inputs: record }, null, 1) + '\n');
  renameSync(`${info}.tmp-${process.pid}`, info);
  pruneStaleChunks(written);
  if (!quiet) process.stderr.write(`built dist/ (${outputs.length} files) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** Chunks first, then workers, then the CLI entry, so an entry never points at a missing chunk. */
const rank = (p) => (p.includes(`${sep}chunks${sep}`) ? 0 : p.includes(`${sep}workers${sep}`) ? 1 : 2);

function pruneStaleChunks(written) {
  const now = Date.now();
  for (const sub of ['chunks', 'workers']) {
    const dir = join(DIST, sub);
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (written.has(p)) continue;
      if (now - statSync(p).mtimeMs > STALE_CHUNK_MS || e.includes('.tmp-')) rmSync(p, { force: true });
    }
  }
}

if (process.argv[1] && relative(fileURLToPath(import.meta.url), process.argv[1]) === '') {
  const ifStale = process.argv.includes('--if-stale');
  if (process.argv.includes('--clean')) rmSync(DIST, { recursive: true, force: true });
  if (!ifStale || !buildState(ROOT).current) await build({ quiet: process.argv.includes('--quiet') });
}
