/**
 * Reads what `standoff rank` ranks: a metric over a store, per task (run suite) and subject (or
 * run), items keyed as `standoff compare` keys them; and a preferences file for Bradley-Terry.
 */
import { dataError, usageError } from '../errors.ts';
import { withStore } from '../analysis/ci.ts';
import type { Reducer } from '../analysis/metrics.ts';
import { readInputFile, texts } from '../analysis/input-file.ts';
import { loadMetricRows } from './load-side.ts';
import { itemKey, type TaskValues } from './side.ts';
import { buildRanking, type RankData, type RankResult, type RankSettings } from './rank.ts';
import { buildPreferenceRanking, type PreferenceResult } from './preferences.ts';

export const RANK_BY = ['subject_model', 'run_id'] as const;
export type RankBy = (typeof RANK_BY)[number];

export interface RankOptions extends RankSettings {
  traces: string;
  runs?: string[];
  metric?: string;
  task?: string[];
  by?: RankBy;
  reduce?: Reducer;
}

export async function loadRanking(o: RankOptions): Promise<RankResult> {
  if (!o.metric) throw usageError('rank.missingArg', 'give --metric NAME (see standoff ci --list-metrics), or --preferences FILE');
  const by = o.by ?? 'subject_model';
  if (!(RANK_BY as readonly string[]).includes(by)) throw usageError('rank.badBy', `--by must be one of ${RANK_BY.join(', ')}, got "${by}"`);
  const rows = await withStore({ traces: o.traces, runs: o.runs }, (conn) => loadMetricRows(conn, o.traces, o.metric!, o.reduce));
  const data: RankData = new Map();
  for (const r of rows) {
    if (o.task && !o.task.includes(r.suite)) continue;
    let t = data.get(r.suite);
    if (!t) data.set(r.suite, (t = new Map()));
    const who = r[by];
    let v: TaskValues | undefined = t.get(who);
    if (!v) t.set(who, (v = { values: new Map(), cluster: new Map() }));
    const k = itemKey(r.scenario_id, r.epoch);
    if (v.values.has(k)) throw dataError('rank.duplicateItem', `${by} "${who}" has two ${o.metric} values for item ${r.scenario_id}${r.epoch === null ? '' : ` epoch ${r.epoch}`} in task ${r.suite} (several runs?): rank --by run_id, or pick runs with --run`);
    v.values.set(k, r.value);
    v.cluster.set(k, r.scenario_id);
  }
  if (o.task) for (const t of o.task) if (!data.has(t)) throw usageError('rank.noTask', `--task "${t}" has no ${o.metric} values (tasks: ${[...new Set(rows.map((r) => r.suite))].sort().join(', ')})`);
  const subjects = new Set([...data.values()].flatMap((m) => [...m.keys()]));
  if (subjects.size < 2) throw dataError('rank.tooFew', `ranking needs at least 2 ${by} values with ${o.metric} measured, found ${subjects.size}`);
  return buildRanking(data, o.metric, by, o);
}

/** `rank --preferences FILE`: columns a, b, winner (a's or b's name, or "tie"). */
export async function loadPreferenceRanking(file: string, s: RankSettings): Promise<PreferenceResult> {
  const t = await readInputFile(file, [{ name: 'a', kind: 'text' }, { name: 'b', kind: 'text' }, { name: 'winner', kind: 'text' }]);
  const a = texts(t, 'a') as string[];
  const b = texts(t, 'b') as string[];
  const w = texts(t, 'winner') as string[];
  const rows = a.map((x, i) => {
    const y = w[i] === x ? 1 : w[i] === b[i] ? 0 : /^(tie|draw)$/i.test(w[i]) ? 0.5 : null;
    if (y === null) throw dataError('rank.badWinner', `${file} ${t.unit} ${t.lines[i]}: winner "${w[i]}" is neither a ("${x}") nor b ("${b[i]}") nor tie`);
    if (x === b[i]) throw dataError('rank.selfPreference', `${file} ${t.unit} ${t.lines[i]}: a and b are both "${x}"`);
    return { a: x, b: b[i], y: y as 0 | 0.5 | 1 };
  });
  return buildPreferenceRanking(rows, s, file);
}
