/**
 * Start-up: the shipped command runs the compiled bundle, and light commands load no heavy module.
 * The test records every module a real `bin/standoff.js` process resolves (an ES resolve hook
 * plus CommonJS's resolver, tests/helpers/module-log/) and maps each bundle chunk to the packages
 * bundled into it (dist/meta.json, esbuild's metafile). A command that starts importing DuckDB,
 * Vega, resvg, openai, Arrow or zod at the top of a module reachable from `--version` or
 * `ci exact` fails here, whichever way the import arrives.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from '../helpers/cli.ts';

/** Heavy modules: each only in the commands that use it. */
const HEAVY = ['@duckdb/node-api', '@duckdb/node-bindings', 'vega', 'vega-lite', '@resvg/resvg-js', 'openai', 'apache-arrow', 'zod'];

let dir: string;
let meta: { outputs: Record<string, { inputs: Record<string, unknown> }> };
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-startup-'));
  meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'meta.json'), 'utf8'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const packageOf = (path: string): string | null => {
  const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return m ? m[1] : null;
};

/** Runs the bin with the module log; returns the repository-relative files it loaded and the packages in them. */
function load(args: string[]): { code: number; stderr: string; files: string[]; packages: Set<string> } {
  const log = join(dir, `modules-${args.join('-').replace(/\W+/g, '_')}.log`);
  const r = spawnSync(process.execPath, ['--import', join(ROOT, 'tests', 'helpers', 'module-log', 'register.mjs'), join(ROOT, 'bin', 'standoff.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, STANDOFF_MODULE_LOG: log, NO_COLOR: '1' },
  });
  const files = [
    ...new Set(
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('file:') || l.startsWith('/'))
        .map((l) => relative(ROOT, l.startsWith('file:') ? fileURLToPath(l) : l).split(sep).join('/')),
    ),
  ];
  const packages = new Set<string>();
  for (const f of files) {
    const own = packageOf(f);
    if (own) packages.add(own);
    for (const input of Object.keys(meta.outputs[f]?.inputs ?? {})) {
      const p = packageOf(input);
      if (p) packages.add(p);
    }
  }
  return { code: r.status ?? -1, stderr: r.stderr, files, packages };
}

describe('start-up', () => {
  it('the bin runs the compiled bundle, not TypeScript', () => {
    const r = load(['--version']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.files).toContain('dist/cli.js');
    expect(r.files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(r.packages.has('tsx')).toBe(false);
  });

  it.each([[['--version']], [['--help']], [['ci', 'exact', '--successes', '20', '--trials', '90']], [['ci', 'exact', '--successes', '20', '--trials', '90', '--format', 'json']]])('standoff %j loads no heavy module', (args) => {
    const r = load(args);
    expect(r.code, r.stderr).toBe(0);
    expect(HEAVY.filter((h) => r.packages.has(h))).toEqual([]);
  });

  it('the check sees heavy modules where they belong: sql loads DuckDB (bundled and native) but not Arrow, schema loads zod', () => {
    const sql = load(['sql', 'select 1']);
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.packages.has('@duckdb/node-api')).toBe(true);
    expect(sql.packages.has('@duckdb/node-bindings')).toBe(true);
    expect(sql.packages.has('vega')).toBe(false);
    // Arrow (~140 modules, most of sql's start-up before) loads only for --out .arrow
    expect(sql.packages.has('apache-arrow')).toBe(false);
    const schema = load(['schema']);
    expect(schema.packages.has('zod')).toBe(true);
  });
});
