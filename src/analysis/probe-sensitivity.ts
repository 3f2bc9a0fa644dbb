/**
 * Sensitivity of the probe tables to flagged states ("Reading Right, Acting Wrong", sections 3 and
 * 5.4: audited records "retained for sensitivity analysis"; excluding them "changed no system group
 * score by more than 3.5 points"). `--exclude-states FILE` lists state ids (scenario ids), one per
 * line, e.g. from a label audit; the headline probe numbers are computed with and without them and
 * the largest change is reported.
 *
 *   loadExcludedStates(path) -> ids            (reads the file)
 *   createExcludedStates(run, ids)             (the temp table the loaders filter on, ids bound as parameters)
 *   loadSensitivity(q, opts, listed) -> ProbeSensitivity
 */
import { readFileSync } from 'node:fs';
import { dataError, storeError } from '../errors.ts';
import type { Plain, SqlParams } from '../store/duckdb.ts';
import { cell, fmtCount, pct, pp, table } from '../report/markdown.ts';
import { loadProbeTables, type ProbeGroupTable, type ProbeTableOptions, type ProbeTables } from './probe-tables.ts';

/** One id per line; blank lines and lines starting with `#` are ignored; surrounding spaces trimmed. */
export function parseExcludedStates(text: string, file: string): string[] {
  const ids = [...new Set(text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')))];
  if (ids.length === 0) throw dataError('probes.excludeEmpty', `${file}: no state ids (one per line; # starts a comment)`);
  return ids;
}

export function loadExcludedStates(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw storeError('probes.excludeFile', `${file}: cannot read the --exclude-states file`, e);
  }
  return parseExcludedStates(text, file);
}

type Run = (sql: string, params?: SqlParams) => Promise<unknown>;

/** Creates (or replaces) the temp table `probe_excluded_states`; every id is a bound parameter. */
export async function createExcludedStates(run: Run, ids: readonly string[]): Promise<void> {
  await run(`CREATE OR REPLACE TEMP TABLE probe_excluded_states (scenario_id VARCHAR)`);
  for (const id of ids) await run(`INSERT INTO probe_excluded_states VALUES ($id)`, { id });
}

export const HEADLINES = [
  ['decision_accuracy', 'Decision accuracy'],
  ['all_facts_correct', 'All facts right'],
  ['errors_after_correct_reading', 'Errors after correct reading'],
  ['action_wrong_given_facts_right', 'P(action wrong | facts right)'],
] as const;

export interface SensitivityRow {
  group: Record<string, Plain>;
  metric: (typeof HEADLINES)[number][0];
  with: { rate: number | null; count: number; n: number };
  without: { rate: number | null; count: number; n: number };
  /** without - with (null when either is undefined). */
  change: number | null;
}

export interface ProbeSensitivity {
  /** Distinct ids in the file. */
  listed: number;
  /** Of those, distinct states present among the probe decisions. */
  found: number;
  rows: SensitivityRow[];
  /** The row with the largest absolute change (null when no change is defined). */
  largest: SensitivityRow | null;
}

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

const keyOf = (g: Record<string, Plain>) => JSON.stringify(g);

/**
 * Both tables (all states; flagged states left out) and the headline changes; the temp table must
 * exist. A caller that already holds one of the two tables, loaded with the same options (the
 * report: all states; `standoff probes --exclude-states`: without the flagged ones), passes it in
 * `known` and only the other is loaded.
 */
export async function loadSensitivity(q: Q, o: ProbeTableOptions, listed: number, known: { all?: ProbeTables; kept?: ProbeTables } = {}): Promise<ProbeSensitivity> {
  const [{ n }] = await q(`SELECT CAST(count(DISTINCT scenario_id) AS BIGINT) AS n FROM probe_decisions WHERE scenario_id IN (SELECT scenario_id FROM probe_excluded_states)`);
  const all = known.all ?? (await loadProbeTables(q, { ...o, excludeStates: false }));
  const kept = known.kept ?? (await loadProbeTables(q, { ...o, excludeStates: true }));
  const keptBy = new Map(kept.groups.map((g) => [keyOf(g.group), g]));
  const rows: SensitivityRow[] = [];
  const share = (g: ProbeGroupTable | undefined, m: SensitivityRow['metric']) => (g ? { rate: g[m].rate, count: g[m].count, n: g[m].n } : { rate: null, count: 0, n: 0 });
  for (const g of all.groups) {
    const k = keptBy.get(keyOf(g.group));
    for (const [m] of HEADLINES) {
      const w = share(g, m);
      const wo = share(k, m);
      rows.push({ group: g.group, metric: m, with: w, without: wo, change: w.rate !== null && wo.rate !== null ? wo.rate - w.rate : null });
    }
  }
  let largest: SensitivityRow | null = null;
  for (const r of rows) if (r.change !== null && (largest === null || Math.abs(r.change) > Math.abs(largest.change!))) largest = r;
  return { listed, found: Number(n), rows, largest };
}

const LABEL = Object.fromEntries(HEADLINES) as Record<SensitivityRow['metric'], string>;

/** The report's subsection (Markdown). */
export function renderSensitivity(s: ProbeSensitivity, groupCol: string): string {
  const out = ['### Sensitivity to flagged states\n'];
  out.push(
    `\`--exclude-states\` lists ${fmtCount(s.listed)} state id${s.listed === 1 ? '' : 's'}; ${fmtCount(s.found)} of them ${s.found === 1 ? 'is' : 'are'} among the probed states. ` +
      `The headline probe numbers with all states and without the flagged ones (as Li, Krishnan & Padman §3 and §5.4 do with audited records); the tables above use all states.\n`,
  );
  const rate = (x: SensitivityRow['with']) => (x.rate === null ? '—' : `${pct(x.rate)} (${fmtCount(x.count)}/${fmtCount(x.n)})`);
  out.push(
    table(
      ['Subject model', 'Measure', 'All states', 'Without flagged states', 'Change'],
      s.rows.map((r) => [cell(String(r.group[groupCol])), LABEL[r.metric], rate(r.with), rate(r.without), r.change === null ? '—' : pp(r.change)]),
      ['l', 'l', 'r', 'r', 'r'],
    ),
  );
  out.push(
    s.largest
      ? `Largest change: ${pp(Math.abs(s.largest.change!)).replace('+', '')} in ${LABEL[s.largest.metric]} for ${cell(String(s.largest.group[groupCol]))} (${s.largest.change! < 0 ? 'lower' : 'higher'} without the flagged states).\n`
      : 'No measure is defined both with and without the flagged states.\n',
  );
  return out.join('\n');
}
