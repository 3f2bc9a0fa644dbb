/**
 * `standoff ci exact|bootstrap|paired --input FILE` and `standoff agreement --input FILE` on data
 * as people have it: one row per sample (or per rating), any column names, grouped with `--by`,
 * a 0/1 column counted for the exact interval (`--value`), composite keys (`--item sample_id,epoch`,
 * `--unit`, `--cluster`), ratings long (`--unit/--rater/--value`) or wide (`--raters c1,c2,c3`),
 * and empty cells refused or dropped (`--missing error|drop`). The file is read by
 * `input-file.ts` (the one CSV reader); the statistics are the same functions the store paths call.
 */
import type { AlphaLevel, BinomialInterval, Sided } from '../stats/index.ts';
import { dataError, usageError } from '../errors.ts';
import { ciExactCounts } from './ci-exact.ts';
import { agreementOf, longToMatrix, type AgreementResult, type Group } from './ci.ts';
import { checkProportion, checkThreads, intervalFor, pairedFrom, parseStatistic, statisticLabel, type BootstrapCi, type BootstrapCiOptions, type PairedCi, type PairedCiOptions } from './ci-bootstrap.ts';
import { numbers, readInputFile, texts, type InputColumn, type InputReadOptions, type InputTable, type MissingPolicy } from './input-file.ts';

/** Separator of the parts of a composite key (never in CSV text a user means as a key). */
const SEP = '\u0000';

/** Rows by group (`by` columns), groups in sorted order of their values. */
function groupRows(t: InputTable, by: string[]): { group: Group; rows: number[] }[] {
  const groups = new Map<string, { group: Group; rows: number[] }>();
  for (let i = 0; i < t.rows; i++) {
    const parts = by.map((c) => texts(t, c)[i]!);
    const key = parts.join(SEP);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { group: Object.fromEntries(by.map((c, k) => [c, parts[k]!])), rows: [] }));
    g.rows.push(i);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}

/** The composite key of row `i` over `cols` (`sample_id/epoch` when shown). */
const keyOf = (t: InputTable, cols: string[], i: number) => cols.map((c) => texts(t, c)[i]!).join(SEP);
const showKey = (k: string) => k.split(SEP).join('/');

const textCols = (cols: string[] | undefined, flag: string): InputColumn[] => (cols ?? []).map((name) => ({ name, kind: 'text', flag }));

/** `byGroups` for an async per-group function, one group at a time (they share the machine's threads). */
async function byGroupsAsync<T>(t: InputTable, by: string[], fn: (rows: number[]) => Promise<T>): Promise<T | (T & { group: Group })[]> {
  if (by.length === 0) return fn(Array.from({ length: t.rows }, (_, i) => i));
  const out: (T & { group: Group })[] = [];
  for (const g of groupRows(t, by)) out.push({ group: g.group, ...(await fn(g.rows)) });
  return out;
}

/** Results per group, or the one result when there is no `--by`. */
function byGroups<T>(t: InputTable, by: string[], fn: (rows: number[]) => T): T | (T & { group: Group })[] {
  if (by.length === 0) return fn(Array.from({ length: t.rows }, (_, i) => i));
  return groupRows(t, by).map((g) => ({ group: g.group, ...fn(g.rows) }));
}

export interface InputOptions {
  /** Group by these columns. */
  by?: string[];
  missing?: MissingPolicy;
  /** `--delimiter`, and `--wide --subjects-from-columns COLS|'*'` (see `InputReadOptions`). */
  delimiter?: string;
  wide?: boolean;
  subjectsFromColumns?: string[];
}

/** How the file is read, from the command's options. */
export function readOpts(o: InputOptions): InputReadOptions {
  if (o.subjectsFromColumns && !o.wide) throw usageError('ci.missingArg', '--subjects-from-columns goes with --wide');
  if (o.wide && !o.subjectsFromColumns?.length) throw usageError('ci.missingArg', "--wide needs --subjects-from-columns COLS (or '*': every column the command does not use otherwise)");
  const cols = o.subjectsFromColumns ?? [];
  return { missing: o.missing, delimiter: o.delimiter, wide: o.wide ? { subjects: cols.length === 1 && cols[0] === '*' ? '*' : cols } : undefined };
}

/* ------------------------------------------------------------------ ci exact */

/**
 * `ci exact --input FILE`: with `value`, successes and trials are counted from a 0/1 column (per
 * `by` group); without it, the file holds `successes` and `trials` columns: one interval per row
 * (the other columns label it), or summed per `by` group.
 */
export async function ciExactInput(
  file: string,
  opts: InputOptions & { value?: string; level?: number; sided?: Sided },
): Promise<(BinomialInterval & { group?: Group })[]> {
  const by = opts.by ?? [];
  const ci = (k: number, n: number, where?: string) => {
    try {
      return ciExactCounts({ successes: k, trials: n, level: opts.level, sided: opts.sided });
    } catch (err) {
      throw dataError('input.badCount', `${file}: ${where ? `${where}: ` : ''}${(err as Error).message}`, err);
    }
  };
  if (opts.value) {
    const t = await readInputFile(file, [{ name: opts.value, kind: 'binary', flag: '--value' }, ...textCols(by, '--by')], readOpts(opts));
    const v = numbers(t, opts.value);
    const count = (rows: number[]) => ci(rows.reduce((a, i) => a + v[i]!, 0), rows.length);
    const r = byGroups(t, by, count);
    return Array.isArray(r) ? r : [r];
  }
  const t0 = await readInputFile(file, [
    { name: 'successes', kind: 'number', flag: '--input' },
    { name: 'trials', kind: 'number', flag: '--input' },
    ...textCols(by, '--by'),
  ], readOpts(opts));
  const k = numbers(t0, 'successes');
  const n = numbers(t0, 'trials');
  if (by.length > 0) {
    return groupRows(t0, by).map((g) => ({ group: g.group, ...ci(g.rows.reduce((a, i) => a + k[i]!, 0), g.rows.reduce((a, i) => a + n[i]!, 0)) }));
  }
  // One interval per row; the other columns (as text) label it.
  const labels = t0.columns.filter((c) => c !== 'successes' && c !== 'trials');
  const t = labels.length ? await readInputFile(file, [{ name: 'successes', kind: 'number' }, { name: 'trials', kind: 'number' }, ...labels.map((name): InputColumn => ({ name, kind: 'text', optional: true }))], readOpts(opts)) : t0;
  return Array.from({ length: t.rows }, (_, i) => ({
    group: Object.fromEntries(labels.map((c) => [c, texts(t, c)[i]!])),
    ...ci(numbers(t, 'successes')[i]!, numbers(t, 'trials')[i]!, `${t.unit} ${t.lines[i]}`),
  }));
}

/* ------------------------------------------------------------- ci bootstrap */

/** `ci bootstrap --input FILE --value COL [--by COLS] [--cluster COLS]`. */
/** Column names read as the item when neither --cluster nor --item names one (to warn when rows repeat an item). */
const ITEM_NAMES = ['scenario_id', 'sample_id', 'item', 'item_id', 'question_id', 'id'];

/** The note for rows that repeat an item without clustering (as the store path says it). */
function repeatNote(t: InputTable, col: string, rows: number[]): string | null {
  const seen = new Map<string | null, number>();
  let max = 1;
  for (const i of rows) {
    const k = texts(t, col)[i] ?? null;
    if (k === null) continue;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n > max) max = n;
  }
  return max > 1 ? `rows repeat items (column ${JSON.stringify(col)}: up to ${max} rows per item) and this interval treats them as independent, so it is too narrow; pass --cluster ${col} (or --item ${col})` : null;
}

export async function ciBootstrapInput(o: BootstrapCiOptions & InputOptions & { cluster?: string | string[]; item?: string | string[] }): Promise<BootstrapCi | (BootstrapCi & { group: Group })[]> {
  if (o.metric) throw usageError('ci.conflict', 'give either --input or --metric, not both');
  if (!o.value) throw usageError('ci.missingArg', '--input needs --value COL (the numeric column)');
  const statistic = typeof o.statistic === 'object' ? o.statistic : parseStatistic(o.statistic);
  o = { ...o, statistic, threads: checkThreads(o.threads) };
  const by = o.by ?? [];
  // --item and --cluster: the same key (as over the store, where the item is the cluster).
  if (o.item && o.cluster && String(o.item) !== String(o.cluster)) throw usageError('ci.conflict', '--item and --cluster name the same thing with --input ci bootstrap; give one');
  const key = o.cluster ?? o.item;
  const cluster = typeof key === 'string' ? key.split(',') : (key ?? []);
  const guess: InputColumn[] = cluster.length ? [] : ITEM_NAMES.filter((c) => c !== o.value && !by.includes(c)).map((name) => ({ name, kind: 'text', optional: true, ifPresent: true }));
  const t = await readInputFile(o.input!, [{ name: o.value!, kind: 'number', flag: '--value' }, ...textCols(by, '--by'), ...textCols(cluster, '--cluster'), ...guess], readOpts(o));
  const itemCol = guess.map((g) => g.name).find((n) => t.values[n] !== undefined);
  const v = numbers(t, o.value!);
  if (statistic.name === 'proportion') checkProportion(Float64Array.from(v as ArrayLike<number>, (x) => x ?? 0), `${o.input} column "${o.value}"`);
  return byGroupsAsync(t, by, async (rows) => {
    if (rows.length < 2) throw dataError('ci.tooFew', `${o.input}: column "${o.value}" has ${rows.length} value${by.length ? ' in a group' : ''}; a bootstrap needs at least 2`);
    const values = Float64Array.from(rows, (i) => v[i]!);
    const r = await intervalFor(values, cluster.length ? rows.map((i) => keyOf(t, cluster, i)) : null, { ...o, cluster: cluster.join(',') || undefined }, cluster.join(',') || undefined);
    const note = itemCol ? repeatNote(t, itemCol, rows) : null;
    if (note) r.note = `${r.note ? `${r.note}; ` : ''}${note}`;
    return r;
  });
}

/* --------------------------------------------------------------- ci paired */

/** `ci paired --input FILE --item COLS --arm COL --value COL --a A --b B [--by COLS] [--cluster COLS]`. */
export async function ciPairedInput(o: PairedCiOptions & InputOptions & { item?: string | string[]; cluster?: string | string[] }): Promise<PairedCi | (PairedCi & { group: Group })[]> {
  if (!o.a || !o.b) throw usageError('ci.missingArg', 'ci paired needs --a and --b');
  if (o.a === o.b) throw usageError('ci.sameArms', `--a and --b are both "${o.a}"`);
  o = { ...o, statistic: parseStatistic(typeof o.statistic === 'object' ? statisticLabel(o.statistic) : o.statistic, ['mean', 'median']), threads: checkThreads(o.threads) };
  const item = typeof o.item === 'string' ? o.item.split(',') : (o.item ?? []);
  for (const [flag, v] of [['--item', item.length ? 'x' : undefined], ['--arm', o.arm], ['--value', o.value]] as const) {
    if (!v) throw usageError('ci.missingArg', `--input needs ${flag} COL`);
  }
  const by = o.by ?? [];
  const cluster = typeof o.cluster === 'string' ? o.cluster.split(',') : (o.cluster ?? []);
  const t = await readInputFile(
    o.input!,
    [...textCols(item, '--item'), { name: o.arm!, kind: 'text', flag: '--arm' }, { name: o.value!, kind: 'number', flag: '--value' }, ...textCols(by, '--by'), ...textCols(cluster, '--cluster')],
    readOpts(o),
  );
  const arms = texts(t, o.arm!);
  const v = numbers(t, o.value!);
  for (const arm of [o.a!, o.b!]) {
    if (!arms.includes(arm)) throw dataError('paired.noArm', `${o.input!}: no rows with ${o.arm} = "${arm}" (arms: ${[...new Set(arms)].slice(0, 10).join(', ')})`);
  }
  return byGroupsAsync(t, by, async (rows) => {
    const va = new Map<string, number>();
    const vb = new Map<string, number>();
    const clusterOf = cluster.length ? new Map<string, string>() : null;
    const order: string[] = [];
    for (const i of rows) {
      const m = arms[i] === o.a ? va : arms[i] === o.b ? vb : null;
      if (!m) continue;
      const key = keyOf(t, item, i);
      if (m.has(key)) {
        throw dataError('paired.duplicateItem', `${o.input}: ${t.unit} ${t.lines[i]}: item "${showKey(key)}" appears twice for arm "${arms[i]}"${item.length === 1 ? ' (an item over several epochs? pass --item COL,epoch)' : ''}`);
      }
      m.set(key, v[i]!);
      clusterOf?.set(key, keyOf(t, cluster, i));
      order.push(key);
    }
    return pairedFrom(o.a!, o.b!, [...new Set(order)], va, vb, clusterOf, cluster.length ? cluster.join(',') : null, o);
  });
}

/* ---------------------------------------------------------------- agreement */

export interface AgreementInputOptions extends InputOptions {
  level: AlphaLevel;
  ciLevel?: number;
  seed: number;
  resamples: number;
  /** Long data: the unit column(s) (default `unit`), the rater column (default `rater`), the value column (default `value`). */
  unit?: string[];
  rater?: string;
  value?: string;
  /** Wide data: one column per rater (each row a unit, named by `unit` when given). */
  raters?: string[];
}

/**
 * `agreement --input FILE`: Krippendorff's alpha from long ratings (unit, rater, value) or wide
 * ones (`raters`: one column per rater). An empty rating is a missing rating (alpha's own missing
 * data); empty unit, rater or `--by` cells follow `--missing`.
 */
export async function agreementInput(file: string, opts: AgreementInputOptions): Promise<AgreementResult | (AgreementResult & { group: Group })[]> {
  const by = opts.by ?? [];
  const kind = opts.level === 'nominal' ? 'text' : 'number';
  if (opts.raters && opts.raters.length > 0) {
    if (opts.rater || opts.value) throw usageError('ci.conflict', 'give --raters C1,C2,... (wide ratings) or --rater/--value (long ratings), not both');
    if (opts.raters.length < 2) throw usageError('ci.missingArg', '--raters needs at least two columns');
    const unit = opts.unit ?? [];
    const t = await readInputFile(file, [...opts.raters.map((name): InputColumn => ({ name, kind, optional: true, flag: '--raters' })), ...textCols(unit, '--unit'), ...textCols(by, '--by')], readOpts(opts));
    return byGroups(t, by, (rows) => {
      const units = rows.map((i) => (unit.length ? keyOf(t, unit, i) : `${t.unit} ${t.lines[i]}`));
      if (new Set(units).size !== units.length) {
        const seen = new Set<string>();
        const i = rows.find((_, k) => seen.size === seen.add(units[k]!).size)!;
        throw dataError('input.duplicateUnit', `${file}: ${t.unit} ${t.lines[i]}: unit "${showKey(keyOf(t, unit, i))}" appears twice (with --raters, one row per unit)`);
      }
      const matrix = opts.raters!.map((r) => rows.map((i) => t.values[r]![i] ?? null));
      return agreementOf(matrix, opts);
    });
  }
  const unit = opts.unit ?? ['unit'];
  const rater = opts.rater ?? 'rater';
  const value = opts.value ?? 'value';
  const t = await readInputFile(file, [...textCols(unit, '--unit'), { name: rater, kind: 'text', flag: '--rater' }, { name: value, kind, optional: true, flag: '--value' }, ...textCols(by, '--by')], readOpts(opts));
  return byGroups(t, by, (rows) => {
    try {
      return agreementOf(longToMatrix(rows.map((i) => keyOf(t, unit, i)), rows.map((i) => texts(t, rater)[i]!), rows.map((i) => t.values[value]![i] ?? null)), opts);
    } catch (err) {
      if ((err as { code?: string }).code === 'input.duplicateRating') {
        const seen = new Set<string>();
        const i = rows.find((r) => seen.size === seen.add(`${texts(t, rater)[r]}${SEP}${keyOf(t, unit, r)}`).size)!;
        throw dataError('input.duplicateRating', `${file}: ${t.unit} ${t.lines[i]}: rater "${texts(t, rater)[i]}" rated unit "${showKey(keyOf(t, unit, i))}" twice`, err);
      }
      throw err;
    }
  });
}
