/**
 * Bench: Krippendorff's alpha on 100,000 units x 5 raters (values 1-5, 10% missing, seeded), at the
 * nominal and interval levels (ordinal and ratio timed too), against NLTK 3.8's
 * `AnnotationTask.alpha()` when Debian's `/usr/bin/python3` has nltk.
 *
 * Timings: Standoff is the median of 3 runs after a warm-up, from the raters x units matrix to
 * alpha. NLTK is one run of `AnnotationTask(data, distance)` construction plus `.alpha()`, timed
 * inside Python (the JSON hand-over and interpreter start are not counted). Both alphas are
 * printed so a disagreement would show.
 *
 * `benchAlpha()` prints lines like
 *   alpha nominal 100000x5: 0.014 s (nltk: 0.69 s, 49x)
 * and returns the figures. It is called by bench/run.ts (not here).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { krippendorffAlpha, type AlphaLevel } from '../src/stats/krippendorff-alpha.ts';
import { createRng } from '../src/stats/rng.ts';

export interface AlphaBenchLine {
  level: AlphaLevel;
  units: number;
  raters: number;
  seconds: number;
  alpha: number | null;
  /** NLTK's timing and value, when available (nominal and interval only). */
  nltk: { seconds: number; alpha: number | null; speedup: number } | null;
}

export interface AlphaBenchResult {
  lines: AlphaBenchLine[];
  /** Why NLTK was not compared, when it was not. */
  nltkSkipped: string | null;
}

const PYTHON = '/usr/bin/python3';

const NLTK_SCRIPT = String.raw`
import json, sys, time
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import binary_distance, interval_distance
ratings = json.load(open(sys.argv[1]))
data = [(str(r), u, v) for r, row in enumerate(ratings) for u, v in enumerate(row) if v is not None]
out = {}
for level, dist in (("nominal", binary_distance), ("interval", interval_distance)):
    t0 = time.perf_counter()
    a = AnnotationTask(data=data, distance=dist).alpha()
    out[level] = {"seconds": time.perf_counter() - t0, "alpha": a}
print(json.dumps(out))
`;

function hasNltk(): string | null {
  if (!fs.existsSync(PYTHON)) return `${PYTHON} not found`;
  try {
    execFileSync(PYTHON, ['-c', 'import nltk'], { stdio: 'ignore' });
    return null;
  } catch {
    return `nltk not importable by ${PYTHON}`;
  }
}

export async function benchAlpha(options: { units?: number; raters?: number; seed?: number } = {}): Promise<AlphaBenchResult> {
  const units = options.units ?? 100_000;
  const raters = options.raters ?? 5;
  const rng = createRng(options.seed ?? 20_240_601);
  const ratings = Array.from({ length: raters }, () =>
    Array.from({ length: units }, () => (rng.uniform() < 0.1 ? null : 1 + rng.int(5))),
  );

  let nltk: Record<string, { seconds: number; alpha: number | null }> | null = null;
  let nltkSkipped = hasNltk();
  if (nltkSkipped === null) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'standoff-bench-alpha-'));
    try {
      const file = path.join(dir, 'ratings.json');
      fs.writeFileSync(file, JSON.stringify(ratings));
      const out = execFileSync(PYTHON, ['-c', NLTK_SCRIPT, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
      nltk = JSON.parse(out);
    } catch (e) {
      nltkSkipped = `nltk run failed: ${(e as Error).message.split('\n')[0]}`;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  const lines: AlphaBenchLine[] = [];
  for (const level of ['nominal', 'interval', 'ordinal', 'ratio'] as AlphaLevel[]) {
    krippendorffAlpha(ratings, level); // warm-up
    const times: number[] = [];
    let alpha: number | null = null;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      alpha = krippendorffAlpha(ratings, level).alpha;
      times.push((performance.now() - t0) / 1000);
    }
    const seconds = times.sort((a, b) => a - b)[1];
    const ref = nltk?.[level];
    const line: AlphaBenchLine = {
      level,
      units,
      raters,
      seconds,
      alpha,
      nltk: ref ? { seconds: ref.seconds, alpha: ref.alpha, speedup: ref.seconds / seconds } : null,
    };
    lines.push(line);
    const cmp = line.nltk
      ? ` (nltk: ${line.nltk.seconds.toFixed(2)} s, ${Math.round(line.nltk.speedup)}x; alpha ${fmt(alpha)} vs nltk ${fmt(line.nltk.alpha)})`
      : level === 'nominal' || level === 'interval'
        ? ` (nltk: skipped, ${nltkSkipped})`
        : '';
    console.log(`alpha ${level} ${units}x${raters}: ${seconds.toFixed(3)} s${cmp}`);
  }
  return { lines, nltkSkipped };
}

function fmt(a: number | null): string {
  return a === null ? 'null' : a.toPrecision(8);
}

// Run directly: `npx tsx bench/stats-alpha.ts`
if (import.meta.url === `file://${process.argv[1]}`) {
  await benchAlpha();
}
