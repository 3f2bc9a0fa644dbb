/**
 * Notebooks: the two shipped notebooks run on a demo-shaped synthetic store; sql blocks become
 * tables, vega-lite blocks figures (with text), standoff blocks the CLI's own commands (parsed by
 * its commander definitions, src/cli/notebook-blocks.ts); bad blocks are one-line errors naming
 * file and line, and nothing is written then.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { parseNotebook, runNotebook as runNotebookLib, splitWords, type NotebookOptions } from '../../src/notebook/notebook.ts';
import { standoffBlockRunner } from '../../src/cli/notebook-blocks.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { StandoffError } from '../../src/errors.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const runStandoffBlock = standoffBlockRunner(buildProgram);

/** Notebooks as the CLI runs them: standoff blocks go through the CLI's commands. */
const runNotebook = (file: string, o: NotebookOptions) => runNotebookLib(file, { standoff: runStandoffBlock, ...o });

let root: string;
let store: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-notebook-'));
  store = join(root, 'traces');
  await writeSyntheticStore(store, { episodes: 270, seed: 21 });
}, 60_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('shipped notebooks', () => {
  it('hasty-without-evidence.md runs: tables, two figures, exact and cluster intervals', async () => {
    const out = join(root, 'nb');
    const r = await runNotebook(join(ROOT, 'notebooks', 'hasty-without-evidence.md'), { traces: store, out, resamples: 500 });
    expect(r.blocks).toEqual({ sql: 6, 'vega-lite': 2, standoff: 2 });
    const md = readFileSync(r.output, 'utf8');
    expect(md).toMatch(/\| subject_model \| episodes \| gathered \| pct_gathered \|\n\| --- \| ---: \| ---: \| ---: \|\n\| sim:hasty \| 90 \|/);
    const exactHeader = md.split('\n').find((l) => l.startsWith('| group.subject_model | group.decision_type |'));
    expect(exactHeader).toBeDefined();
    for (const c of ['successes', 'trials', 'lower', 'upper']) expect(exactHeader).toContain(`| ${c} |`);
    expect(md).toContain('](hasty-without-evidence-1.png)');
    for (const n of [1, 2]) {
      const svg = readFileSync(join(out, `hasty-without-evidence-${n}.svg`), 'utf8');
      expect((svg.match(/<text/g) ?? []).length).toBeGreaterThan(5);
      expect(readFileSync(join(out, `hasty-without-evidence-${n}.png`)).length).toBeGreaterThan(10_000);
      const spec = JSON.parse(readFileSync(join(out, `hasty-without-evidence-${n}.vl.json`), 'utf8'));
      expect(spec.data.values.length).toBeGreaterThan(0);
    }
    expect(readdirSync(out).filter((e) => e.startsWith('.'))).toEqual([]);
  }, 60_000);

  it('judge-disagreement.md runs: verdict counts, agreement, disagreement cases, judges totals', async () => {
    const out = join(root, 'nb');
    const r = await runNotebook(join(ROOT, 'notebooks', 'judge-disagreement.md'), { traces: store, out, resamples: 500 });
    expect(r.blocks).toEqual({ sql: 6, 'vega-lite': 2, standoff: 2 });
    const md = readFileSync(r.output, 'utf8');
    expect(md).toMatch(/\| sim:judge-lenient \| simfam-careful \| \d+ \| \d+ \| \d+ \| 0 \| 90 \|/);
    expect(md).toMatch(/\| reasoning_action_alignment \| 0\.\d+ \|/); // agreement block: alpha
    expect(md).toMatch(/sim:judge-lenient: (ALIGNED|MISALIGNED) \(self, excluded\)/);
    expect(md).toContain('_(no rows)_'); // the synthetic store has no transcripts
  }, 60_000);

  it('decide-with-evidence.md runs: compare verdicts, rank tiers, plan from the pilot', async () => {
    const out = join(root, 'nb');
    const r = await runNotebook(join(ROOT, 'notebooks', 'decide-with-evidence.md'), { traces: store, out, resamples: 300 });
    expect(r.blocks).toEqual({ sql: 0, 'vega-lite': 0, standoff: 6 });
    const md = readFileSync(r.output, 'utf8');
    expect(md).toContain('### standoff compare: subject:sim:hasty vs subject:sim:careful');
    expect(md).toContain('**Result: fail** (--fail-on worse)');
    expect(md).toMatch(/\| gathered_evidence \| standoff-o1 \| \d+ \| .* \| ❌ worse \|/);
    expect(md).toMatch(/\| task \| subject \| observations \| estimate \| lower \| upper \| rank \| rank_lower \| rank_upper \| tier \|/);
    expect(md).toMatch(/\| paired-proportion \| .* \| 307 \|/);
    expect(process.exitCode ?? 0).toBe(0); // a failing --fail-on inside a notebook does not set the exit code
  }, 60_000);

  it('is deterministic: the same notebook twice gives the same bytes', async () => {
    const a = join(root, 'det-a');
    const b = join(root, 'det-b');
    const nb = join(ROOT, 'notebooks', 'judge-disagreement.md');
    const ra = await runNotebook(nb, { traces: store, out: a, resamples: 300 });
    await runNotebook(nb, { traces: store, out: b, resamples: 300 });
    for (const f of ra.files) {
      const name = f.slice(a.length + 1);
      expect(readFileSync(join(a, name)).equals(readFileSync(join(b, name))), name).toBe(true);
    }
  }, 60_000);
});

describe('standoff notebook run (the CLI)', () => {
  it('runs a shipped notebook by name from another directory and prints true counts', () => {
    const out = join(root, 'cli-nb');
    const r = runCli(['notebook', 'run', 'judge-disagreement', '--traces', store, '--out', out, '--resamples', '300'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const m = /^wrote (.+): (\d+) sql, (\d+) vega-lite and (\d+) standoff blocks; (\d+) figures \((\d+) files: \.png, \.svg, \.vl\.json\)$/.exec(r.stdout.trim());
    expect(m, r.stdout).not.toBeNull();
    const src = readFileSync(join(ROOT, 'notebooks', 'judge-disagreement.md'), 'utf8');
    const fences = (kind: string) => (src.match(new RegExp(`^\`\`\`${kind}$`, 'gm')) ?? []).length;
    expect(m!.slice(2, 5).map(Number)).toEqual([fences('sql'), fences('vega-lite'), fences('standoff')]);
    const figureFiles = readdirSync(out).filter((f) => /^judge-disagreement-\d+\.(png|svg|vl\.json)$/.test(f));
    expect(Number(m![6])).toBe(figureFiles.length);
    expect(Number(m![5])).toBe(figureFiles.filter((f) => f.endsWith('.png')).length);
    expect(m![1]).toBe(join(out, 'judge-disagreement.md'));
  });

  it('notebook list names the shipped notebooks', () => {
    const r = runCli(['notebook', 'list', '--format', 'json'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).map((n: { name: string }) => n.name)).toEqual(readdirSync(join(ROOT, 'notebooks')).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3)).sort());
  });
});

describe('blocks', () => {
  const write = (name: string, text: string) => {
    const p = join(root, name);
    writeFileSync(p, text);
    return p;
  };

  it('copies text and unknown fences unchanged, and caps long results', async () => {
    const p = write('plain.md', '# T\n\n```python\nprint(1)\n```\n\n```sql\nSELECT range AS i FROM range(250)\n```\n');
    const r = await runNotebook(p, { traces: store, out: join(root, 'plain') });
    const md = readFileSync(r.output, 'utf8');
    expect(md).toContain('```python\nprint(1)\n```');
    expect(md).toContain('_… 50 more rows not shown (250 in all)._');
    expect(r.blocks).toEqual({ sql: 1, 'vega-lite': 0, standoff: 0 });
  });

  it('a failing sql block: notebook.sqlError naming file and line; nothing written', async () => {
    const p = write('bad-sql.md', '# T\n\ntext\n\n```sql\nSELECT nope FROM episodes\n```\n');
    const out = join(root, 'bad-sql');
    const e = await runNotebook(p, { traces: store, out }).catch((x) => x);
    expect(e).toBeInstanceOf(StandoffError);
    expect(e.code).toBe('notebook.sqlError');
    expect(e.message).toMatch(new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:5: sql block failed: `));
    expect(e.message).not.toContain('\n');
    expect(existsSync(join(out, 'bad-sql.md'))).toBe(false);
    expect(readdirSync(out)).toEqual([]);
  });

  it('sql blocks are read-only: writing files is refused by the sandbox', async () => {
    const target = join(root, 'leak.csv');
    const p = write('write.md', `\`\`\`sql\nCOPY (SELECT 1) TO '${target}'\n\`\`\`\n`);
    const e = await runNotebook(p, { traces: store, out: join(root, 'write') }).catch((x) => x);
    expect(e.code).toBe('notebook.sqlError');
    expect(existsSync(target)).toBe(false);
  });

  it('a vega-lite block without data and without a previous query: notebook.badSpec', async () => {
    const p = write('bad-vl.md', '```vega-lite\n{"mark": "bar"}\n```\n');
    const e = await runNotebook(p, { traces: store, out: join(root, 'bad-vl') }).catch((x) => x);
    expect([e.code, e.kind]).toEqual(['notebook.badSpec', 'data']);
  });

  it('an unsupported or malformed standoff block: notebook.badCommand (usage), with the reason', async () => {
    const cases: [string, RegExp][] = [
      ['ci wilson --metric gathered_evidence', /unsupported standoff block "ci wilson --metric gathered_evidence"; a block runs one of: ci exact, ci bootstrap, ci paired, agreement, judges, probes, compare, rank, plan$/],
      ['compare --baseline subject:sim:careful --candidate subject:sim:hasty --metric gathered_evidence --baseline-traces other', /--baseline-traces is not allowed in a standoff block: a notebook reads only its store/],
      ['rank --preferences prefs.csv', /--preferences is not allowed in a standoff block/],
      ['plan --baseline 0.7 --effect -5pp --out plan.svg', /--out is not allowed in a standoff block: a block writes no files/],
      ['sql "SELECT 1"', /unsupported standoff block/],
      ['ci exact --metric gathered_evidence --traces other', /--traces is not allowed in a standoff block: the notebook's store is used/],
      ['ci exact --metric gathered_evidence --format csv', /--format is not allowed in a standoff block/],
      ['agreement --json', /--json is not allowed in a standoff block/],
      ['ci exact --metric gathered_evidence --level abc', /--level must be a number, got "abc"/],
      ['agreement --level ordinal', /for the measurement level use --measure ordinal/],
      // The commander definitions: misspelled options get the CLI's "did you mean".
      ['ci bootstrap --metric policy_action --clustr scenario_id', /unknown option '--clustr' \(did you mean --cluster\?\)$/],
      ['ci paired --help', /a standoff block must run a command, not print help/],
    ];
    for (const [body, why] of cases) {
      const p = write('bad-cmd.md', `\`\`\`standoff\n${body}\n\`\`\`\n`);
      const e = await runNotebook(p, { traces: store, out: join(root, 'bad-cmd') }).catch((x) => x);
      expect([e.code, e.kind], body).toEqual(['notebook.badCommand', 'usage']);
      expect(e.message, body).toMatch(/bad-cmd\.md:1: /);
      expect(e.message, body).toMatch(why);
      expect(e.message).not.toContain('\n');
    }
  });

  it('--input in a block is refused with the documented reason and what to do instead', async () => {
    const p = write('input.md', '```standoff\nci exact --input results.csv\n```\n');
    const e = await runNotebook(p, { traces: store, out: join(root, 'input') }).catch((x) => x);
    expect(e.code).toBe('notebook.badCommand');
    expect(e.message).toBe(`${p}:1: --input is not allowed in a standoff block: a notebook reads only its store: ingest the file first (standoff ingest csv FILE --traces DIR), or run the command with --input outside the notebook`);
    const doc = readFileSync(join(ROOT, 'docs', 'notebooks.md'), 'utf8');
    expect(doc).toContain('`--input` is refused');
  });

  it('a block gives the same numbers as the command line, and takes every option the command has', async () => {
    const args = ['ci', 'bootstrap', '--metric', 'policy_action', '--by', 'subject_model', '--method', 'bca', '--resamples', '400', '--seed', '9'];
    const p = write('same.md', `\`\`\`standoff\nstandoff ${args.join(' ')}\n\`\`\`\n`);
    const r = await runNotebook(p, { traces: store, out: join(root, 'same') });
    const cli = runCli([...args, '--traces', store, '--format', 'markdown']);
    expect(cli.code, cli.stderr).toBe(0);
    expect(readFileSync(r.output, 'utf8')).toContain(cli.stdout.trim());
    expect(cli.stdout).toContain('| bca |');
  });

  it('notebook seed, resamples and level are the defaults of standoff blocks; a block may override them', async () => {
    const p = write('defaults.md', '```standoff\nci exact --metric gathered_evidence\n```\n\n```standoff\nci exact --metric gathered_evidence --level 0.8\n```\n');
    const r = await runNotebook(p, { traces: store, out: join(root, 'defaults'), level: 0.9 });
    const levels = [...readFileSync(r.output, 'utf8').matchAll(/\| (0\.\d+) \| clopper-pearson \|/g)].map((m) => m[1]);
    expect(levels).toEqual(['0.9', '0.8']);
  });

  it('without the CLI runner a standoff block is refused (the library does not import the CLI)', async () => {
    const p = write('no-runner.md', '```standoff\nprobes\n```\n');
    const e = await runNotebookLib(p, { traces: store, out: join(root, 'no-runner') }).catch((x) => x);
    expect(e.code).toBe('notebook.badCommand');
  });

  it('errors of the statistics library carry the block position', async () => {
    const p = write('bad-metric.md', '```standoff\nci exact --metric nope\n```\n');
    const e = await runNotebook(p, { traces: store, out: join(root, 'bad-metric') }).catch((x) => x);
    expect(e.code).toBe('metric.unknown');
    expect(e.message).toMatch(/bad-metric\.md:1: unknown metric "nope"/);
  });

  it('parses fences and command words', () => {
    const pieces = parseNotebook('a\n~~~sql\nSELECT 1\n~~~\nb\n````vega-lite\n{}\n````\n');
    expect(pieces.map((p) => ('text' in p ? 'text' : p.kind))).toEqual(['text', 'sql', 'text', 'vega-lite', 'text']);
    expect(splitWords(`ci paired --a "sim:a b" --b 'x'`)).toEqual(['ci', 'paired', '--a', 'sim:a b', '--b', 'x']);
  });
});
