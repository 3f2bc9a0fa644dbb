/**
 * Notebooks stay in the store and stay bounded (issue 22, point 5 and LOWs):
 * - a `standoff` block cannot name a file outside the store with any path option (`--metric-sql`
 *   here; `confineBlockPaths` is a rule over every option whose argument is <file>/<dir>/<path>,
 *   checked on a made-up later option too); symlinks are followed; errors never echo file content;
 * - a Vega-Lite data generator (`sequence` to 1e8) is refused with one line before Vega runs;
 * - a NUL inside REPL SQL is refused instead of silently truncating the statement.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { writeRun } from '../../src/store/write-run.ts';
import { runNotebook as runNotebookLib, type NotebookOptions } from '../../src/notebook/notebook.ts';
import { confineBlockPaths, standoffBlockRunner } from '../../src/cli/notebook-blocks.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { findUnboundedGenerator, MAX_GENERATED_ROWS } from '../../src/report/render-figure.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

const runStandoffBlock = standoffBlockRunner(buildProgram);

const runNotebook = (file: string, o: NotebookOptions) => runNotebookLib(file, { standoff: runStandoffBlock, ...o });

let root: string;
let store: string;
const SECRET = 'OPENAI_API_KEY=sk-h22a-do-not-echo';
const METRIC = 'SELECT run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, CAST(gathered_evidence AS DOUBLE) AS value FROM episodes';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-nb-bounds-'));
  store = join(root, 'traces');
  await writeRun(store, sampleBundle('r1'));
  writeFileSync(join(root, '.env'), SECRET + '\n');
  mkdirSync(join(store, 'metrics'));
  writeFileSync(join(store, 'metrics', 'evidence.sql'), METRIC);
  symlinkSync(join(root, '.env'), join(store, 'metrics', 'leak.sql'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const block = (name: string, words: string) => {
  const p = join(root, `${name}.md`);
  writeFileSync(p, '```standoff\n' + words + '\n```\n');
  return p;
};

describe('a notebook standoff block names only files of its store', () => {
  for (const [name, path] of [
    ['etc-passwd', '/etc/passwd'],
    ['dotenv-relative', '../.env'],
    ['dotenv-absolute', '.ENV_ABS'],
    ['symlink-out', 'metrics/leak.sql'],
  ] as const) {
    it(`--metric-sql ${name}: refused (notebook.pathOutsideStore, exit 2), nothing echoed, store unchanged`, async () => {
      const before = hashTree(store);
      const p = block(name, `ci exact --metric-sql ${path === '.ENV_ABS' ? join(root, '.env') : path}`);
      const e = await runNotebook(p, { traces: store, out: join(root, `out-${name}`) }).catch((x) => x);
      expect(e.code).toBe('notebook.pathOutsideStore');
      expect(e.kind).toBe('usage');
      expect(e.message).toMatch(/is outside the notebook's store/);
      expect(e.message).not.toMatch(/root:|sk-h22a/);
      expect(e.message).not.toContain('\n');
      expect(hashTree(store)).toBe(before);
    });
  }

  it('a metric file inside the store, relative to it, runs', async () => {
    const p = block('inside', 'ci exact --metric-sql metrics/evidence.sql');
    const r = await runNotebook(p, { traces: store, out: join(root, 'out-inside') });
    expect(readFileSync(r.output, 'utf8')).toMatch(/\| evidence \|.*clopper-pearson/);
  });

  it('the rule covers every path option, a later one too: a made-up --report-file <file> outside the store is refused', () => {
    const cmd = new Command('x').option('--report-file <file>').option('--extra-dirs <dirs...>').option('--name <name>');
    cmd.parse(['--report-file', '/etc/hosts', '--name', '/etc/passwd'], { from: 'user' });
    expect(() => confineBlockPaths(cmd, store, 'nb.md:1')).toThrow(/--report-file \/etc\/hosts is outside the notebook's store/);
    const ok = new Command('x').option('--report-file <file>').option('--extra-dirs <dirs...>');
    ok.parse(['--report-file', 'metrics/evidence.sql', '--extra-dirs', 'runs', 'episodes'], { from: 'user' });
    confineBlockPaths(ok, store, 'nb.md:1');
    expect(ok.getOptionValue('reportFile')).toBe(join(store, 'metrics', 'evidence.sql'));
    const up = new Command('x').option('--extra-dirs <dirs...>');
    up.parse(['--extra-dirs', 'runs', '../..'], { from: 'user' });
    expect(() => confineBlockPaths(up, store, 'nb.md:1')).toThrow(/--extra-dirs \.\.\/\.\. is outside/);
  });

  it('on the command line, --metric-sql naming a non-SQL file gives an error without its content', () => {
    for (const f of ['/etc/passwd', join(root, '.env')]) {
      const r = runCli(['ci', 'exact', '--traces', store, '--metric-sql', f]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).not.toMatch(/root:|sk-h22a|LINE 1/);
      expect(r.stderr.trim().split('\n').length).toBe(1);
    }
  });
});

describe('Vega-Lite data generators are bounded', () => {
  it('sequence to 1e8 in a notebook: notebook.badSpec, one line, nothing written', async () => {
    const p = join(root, 'seq.md');
    writeFileSync(p, '```vega-lite\n{"data":{"sequence":{"start":0,"stop":1e8}},"mark":"point","encoding":{"x":{"field":"data","type":"quantitative"}}}\n```\n');
    const e = await runNotebook(p, { traces: store, out: join(root, 'out-seq') }).catch((x) => x);
    expect(e.code).toBe('notebook.badSpec');
    expect(e.message).toBe(`${p}:1: figure data generator too large: data.sequence making 1.00e+8 rows; a figure may generate at most ${MAX_GENERATED_ROWS} rows`);
  });

  it('finds generators in Vega-Lite and compiled Vega specs; small ones pass', () => {
    expect(findUnboundedGenerator({ data: { sequence: { start: 0, stop: 100 } } })).toBeNull();
    expect(findUnboundedGenerator({ data: { sequence: { start: 0, stop: 1e6, step: 0.5 } } })).toMatch(/2\.00e\+6 rows/);
    expect(findUnboundedGenerator({ layer: [{ data: { sequence: { start: 0, stop: { signal: 'x' } } } }] })).toMatch(/unbounded/);
    expect(findUnboundedGenerator({ data: [{ name: 'd', transform: [{ type: 'sequence', start: 0, stop: 1e9 }] }] })).toMatch(/sequence transform/);
    expect(findUnboundedGenerator({ data: { graticule: { step: [0.001, 0.001] } } })).toMatch(/graticule/);
    expect(findUnboundedGenerator({ data: { graticule: true } })).toBeNull();
  });
});

describe('REPL SQL with a NUL', () => {
  it('is refused (exit 2, one line), not truncated; the next statement still runs', () => {
    const r = runCli(['sql', '--traces', store], { input: 'SELECT 1 AS a\0, 2 AS b;\nSELECT 42 AS x;\n' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('standoff: sql refused: the query holds a NUL character, where DuckDB would end it; remove it');
    expect(r.stdout).toContain('42');
    expect(r.stdout).not.toMatch(/^a\b/m);
  });
});
