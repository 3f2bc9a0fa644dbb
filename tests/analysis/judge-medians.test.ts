/**
 * `standoff judges` over the store reads verdict patterns and streams samples
 * (src/analysis/judge-medians.ts). These tests hold it to the row-by-row path it replaced, which
 * `judges --input` still runs (one matrix of every judgment, `medianOfJudges` over it): same
 * per-sample rows and same totals, for each self-exclusion rule, on a panel with missing
 * judgments, ERROR verdicts (NULL values), ties and self-judges; and a duplicated judgment is
 * still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createDb, query } from '../../src/store/duckdb.ts';
import { loadJudgeMedians, type JudgeSampleRow } from '../../src/analysis/judge-medians.ts';
import { judgesFromInput } from '../../src/analysis/ci.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-judge-medians-'));
let db: DuckDBInstance;
let conn: DuckDBConnection;
afterAll(() => {
  conn?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

// A small deterministic panel: 4 subjects (two share a family with a judge), 4 judges.
const SUBJECTS = [
  ['acme-large', 'acme'],
  ['acme-small', 'acme'],
  ['zeta-1', 'zeta'],
  ['other', 'other'],
];
const JUDGES = [
  ['acme-large', 'acme'],
  ['zeta-judge', 'zeta'],
  ['neutral-a', 'neutral-a'],
  ['neutral-b', 'neutral-b'],
];
const VALUES = [0, 0.5, 1, null];

function rows(): { episodes: unknown[][]; judgments: unknown[][] } {
  let x = 12345;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const episodes: unknown[][] = [];
  const judgments: unknown[][] = [];
  for (let i = 0; i < 400; i++) {
    const [subject, family] = SUBJECTS[i % SUBJECTS.length]!;
    const ep = `ep-${String(i).padStart(3, '0')}`;
    episodes.push(['run-1', ep, subject, family]);
    for (const [judge, jfam] of JUDGES) {
      if (rnd() < 0.1) continue; // this judge did not judge the sample
      judgments.push(['run-1', ep, 'align', judge, jfam, VALUES[Math.floor(rnd() * VALUES.length)]]);
    }
  }
  return { episodes, judgments };
}

beforeAll(async () => {
  db = await createDb();
  conn = await db.connect();
  const { episodes, judgments } = rows();
  await query(conn, `CREATE TABLE episodes (run_id VARCHAR, episode_id VARCHAR, subject_model VARCHAR, subject_family VARCHAR)`);
  await query(conn, `CREATE TABLE judgments (run_id VARCHAR, episode_id VARCHAR, scorer VARCHAR, judge_model VARCHAR, judge_family VARCHAR, value DOUBLE)`);
  const lit = (v: unknown) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v)}'`);
  await query(conn, `INSERT INTO episodes VALUES ${episodes.map((r) => `(${r.map(lit).join(', ')})`).join(', ')}`);
  await query(conn, `INSERT INTO judgments VALUES ${judgments.map((r) => `(${r.map(lit).join(', ')})`).join(', ')}`);
  // The same judgments as a long file for `judges --input` (the row-by-row path).
  const fam = new Map(episodes.map((e) => [e[1], e]));
  const csv = ['sample,subject_model,subject_family,judge,judge_model,judge_family,value'];
  for (const [run, ep, , judge, jfam, value] of judgments) {
    const e = fam.get(ep)!;
    csv.push(`${run}/${ep},${e[2]},${e[3]},${judge},${judge},${jfam},${value === null ? '' : value}`);
  }
  writeFileSync(join(dir, 'long.csv'), csv.join('\n') + '\n');
});

async function streamed(excludeBy: 'model' | 'family' | 'none') {
  const m = (await loadJudgeMedians(conn, { scorer: 'align', excludeBy }))!;
  const samples: JudgeSampleRow[] = [];
  await m.forEachSample((chunk) => void samples.push(...chunk));
  return { m, samples };
}

describe('judges over the store: verdict patterns give what the judgment matrix gave', () => {
  for (const excludeBy of ['family', 'model', 'none'] as const) {
    it(`--exclude-by ${excludeBy}: the same rows and totals as the row-by-row path`, async () => {
      const { m, samples } = await streamed(excludeBy);
      // NULL values are missing either way: the file path drops them, as an absent judgment.
      const ref = await judgesFromInput(join(dir, 'long.csv'), { excludeBy, missing: 'drop' });
      expect(samples).toEqual(ref.samples);
      expect(m.totals).toEqual(ref.totals);
      expect(m.exclude_by).toBe(excludeBy);
    });
  }

  it('totals counted over hash partitions of the episodes (as at 1e7) are the totals counted at once', async () => {
    for (const excludeBy of ['family', 'model'] as const) {
      const whole = (await loadJudgeMedians(conn, { scorer: 'align', excludeBy }))!.totals;
      const parts = (await loadJudgeMedians(conn, { scorer: 'align', excludeBy, judgmentsPerPart: 100 }))!.totals;
      expect(parts).toEqual(whole);
    }
  });

  it('the panel is not degenerate: exclusions, missing verdicts and ties all occur', async () => {
    const { m } = await streamed('family');
    expect(m.totals.samples).toBe(400);
    expect(m.totals.excluded_verdicts).toBeGreaterThan(50);
    expect(m.totals.missing_verdicts).toBeGreaterThan(50);
    expect(m.totals.ties).toBeGreaterThan(10);
  });

  it('a scorer without judgments gives null; a judge that judged a sample twice is refused', async () => {
    expect(await loadJudgeMedians(conn, { scorer: 'nothing' })).toBeNull();
    await query(conn, `INSERT INTO judgments VALUES ('run-1', 'ep-007', 'align', 'neutral-a', 'neutral-a', 1)`);
    try {
      await expect(loadJudgeMedians(conn, { scorer: 'align' })).rejects.toThrow('judge "neutral-a" scored sample "run-1/ep-007" twice');
    } finally {
      await query(conn, `DELETE FROM judgments WHERE episode_id = 'ep-007' AND judge_model = 'neutral-a' AND value = 1`);
    }
  });
});
