/**
 * Notebooks: the two shipped notebooks run on a demo-shaped synthetic store; sql blocks become
 * tables, vega-lite blocks figures (with text), standoff blocks the CLI library's results; bad
 * blocks are one-line errors naming file and line, and nothing is written then.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { parseNotebook, runNotebook, splitWords } from '../../src/report/notebook.ts';
import { StandoffError } from '../../src/errors.ts';
import { ROOT } from '../helpers/cli.ts';

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

  it('an unsupported or malformed standoff block: notebook.badCommand (usage)', async () => {
    for (const body of ['ci wilson --metric gathered_evidence', 'ci exact --metric gathered_evidence --traces other', 'ci exact --metric gathered_evidence --level abc']) {
      const p = write('bad-cmd.md', `\`\`\`standoff\n${body}\n\`\`\`\n`);
      const e = await runNotebook(p, { traces: store, out: join(root, 'bad-cmd') }).catch((x) => x);
      expect([e.code, e.kind], body).toEqual(['notebook.badCommand', 'usage']);
      expect(e.message).toMatch(/bad-cmd\.md:1: /);
    }
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
