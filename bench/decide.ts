/**
 * `npm run bench -- decide`: whole-process time of `standoff compare`, `standoff rank` and
 * `standoff plan` (pilot) on a synthetic store of 1e5 items x 2 subjects (one epoch each,
 * `writeSyntheticStore`), against `standoff sql "SELECT count(*) FROM episodes"` on the same store
 * (DuckDB load, store open, one scan) measured in the same run, interleaved round by round.
 * Target (issue 26): each under 2 s. Medians of ROUNDS runs; the load average is printed, since
 * other work on the machine inflates the figures (the ratio to the baseline is the stable part).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from './synthetic-store.ts';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'standoff.js');
const ROUNDS = Number(process.env.BENCH_DECIDE_ROUNDS ?? 5);
const ITEMS = 100_000;
const TARGET_S = 2;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function benchDecide() {
  const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build failed: ${b.stderr}`);
  const dir = mkdtempSync(join(tmpdir(), 'standoff-bench-decide-'));
  try {
    const S = join(dir, 'S');
    const w = await writeSyntheticStore(S, { episodes: 2 * ITEMS, seed: 26, subjects: ['sim:careful', 'sim:hasty'], epochs: 1, judgments: false, probes: false });
    const cases: { name: string; args: string[]; target?: number }[] = [
      { name: 'sql count(*) (baseline)', args: ['sql', '--traces', S, 'SELECT count(*) FROM episodes'] },
      { name: 'compare', args: ['compare', '--traces', S, '--baseline', 'subject:sim:careful', '--candidate', 'subject:sim:hasty', '--metric', 'gathered_evidence', '--format', 'json'], target: TARGET_S },
      { name: 'rank', args: ['rank', '--traces', S, '--metric', 'gathered_evidence', '--format', 'json'], target: TARGET_S },
      { name: 'plan (pilot)', args: ['plan', '--traces', S, '--metric', 'gathered_evidence', '--a', 'sim:careful', '--b', 'sim:hasty', '--effect', '-1pp', '--format', 'json'], target: TARGET_S },
      { name: 'plan (design)', args: ['plan', '--baseline', '0.7', '--effect', '-5pp', '--epochs', '2', '--icc', '0.15', '--items', '500'], target: TARGET_S },
    ];
    const once = (args: string[]) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
      if (r.status !== 0) throw new Error(`standoff ${args.join(' ')} failed: ${r.stderr}`);
      return (performance.now() - t0) / 1000;
    };
    for (const c of cases) once(c.args); // warm the file cache
    const times = new Map(cases.map((c) => [c.name, [] as number[]]));
    const loadBefore = loadavg()[0];
    for (let i = 0; i < ROUNDS; i++) for (const c of cases) times.get(c.name)!.push(once(c.args));
    const base = median(times.get(cases[0].name)!);
    const rows = cases.map((c) => {
      const m = median(times.get(c.name)!);
      return { name: c.name, medianSeconds: Number(m.toFixed(3)), ratioToBaseline: Number((m / base).toFixed(2)), target: c.target ?? null, ok: c.target === undefined ? null : m < c.target };
    });
    for (const r of rows) {
      process.stdout.write(`${r.name}: ${r.medianSeconds.toFixed(2)} s (x${r.ratioToBaseline} of sql count)${r.target ? ` [target < ${r.target} s: ${r.ok ? 'ok' : 'MISSED'}]` : ''}\n`);
    }
    process.stdout.write(`store: ${w.episodes} episodes (${w.scenarios} items x ${w.subjects.length} subjects x ${w.epochs} epoch); load average ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}; ${ROUNDS} rounds\n`);
    return { items: w.scenarios, subjects: w.subjects, rounds: ROUNDS, rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
