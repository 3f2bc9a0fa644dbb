/**
 * `standoff merge OUT STORE...`: copies the committed runs of several stores into one (the shards
 * of a run spread over machines, each written into its own store, then gathered).
 *
 * - A run that is not sharded (no `shard` in `runs.config`) is copied as it is: its Parquet
 *   partitions byte for byte.
 * - The shards of one run (`standoff run --shard i/N`: the same run id, `runs.config.shard`
 *   = {index: i, count: N}) become one run: every table's rows in the unsharded run's order
 *   (units by (subject, scenario, epoch), rows of a unit in their order), written through the
 *   `RunWriter` as the runner writes a run, so the merged Parquet equals the unsharded run's
 *   except where the shards ran apart (see `mergedRunRow`).
 *
 * Everything is checked before anything is written, and the result is committed run by run
 * under the store lock (`runs` last), so a refused merge leaves OUT exactly as it was. Refused
 * (exit 3, one line): a run id that OUT already holds or two sources hold outside one sharded
 * run; shards of one run whose configurations differ (anything but `shard` and
 * `request_adjustments`), whose counts differ, that repeat or miss a shard, or whose episodes
 * overlap.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JSDuckDBValueConverter, type DuckDBConnection } from '@duckdb/node-api';
import { dataError, storeError, usageError } from '../errors.ts';
import { TABLE_NAMES, fileColumns, type RunRow, type TableName } from '../schema/tables.ts';
import { createDb, quoteIdent, quoteLiteral, toPlain, withConnection } from './duckdb.ts';
import { RunWriter } from './run-writer.ts';
import { cleanupStore, commitStaged, createStaging, fsyncPath, isRunCommitted, listCommittedRuns, partitionDir, storeExists, writeFailed } from './write-run.ts';

/** One committed run of a source store. */
interface SourceRun {
  store: string;
  run: RunRow;
  config: Record<string, unknown>;
  shard: { index: number; count: number } | null;
}

/** What is to be written for one run id. */
export interface MergePlanItem {
  runId: string;
  /** `copy`: one unsharded run, copied as is; `shards`: the shards of one run, merged. */
  kind: 'copy' | 'shards';
  sources: string[];
}

export interface MergeResult {
  out: string;
  runs: Array<MergePlanItem & { tables: Partial<Record<TableName, number>> }>;
}

const fileOf = (store: string, table: TableName, runId: string) => join(partitionDir(store, table, runId), 'data.parquet');

async function readRunRow(conn: DuckDBConnection, store: string, runId: string): Promise<RunRow> {
  const cols = fileColumns('runs');
  const select = cols.map((c) => (c.type === 'TIMESTAMP' ? `strftime(${quoteIdent(c.name)}, '%Y-%m-%dT%H:%M:%S.%gZ')` : quoteIdent(c.name)) + ` AS ${quoteIdent(c.name)}`);
  const r = await conn.runAndReadAll(`SELECT ${select.join(', ')} FROM read_parquet(${quoteLiteral(fileOf(store, 'runs', runId))})`);
  const row = r.getRowObjectsJS()[0];
  if (!row) throw dataError('merge.badRun', `${store}: run "${runId}" has an empty runs partition`);
  const plain = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, toPlain(v)]));
  return { ...(plain as unknown as RunRow), run_id: runId };
}

function parseShard(store: string, runId: string, config: Record<string, unknown>): SourceRun['shard'] {
  const s = config.shard as { index?: unknown; count?: unknown } | undefined;
  if (s === undefined || s === null) return null;
  if (!Number.isInteger(s.index) || !Number.isInteger(s.count) || (s.count as number) < 1 || (s.index as number) < 1 || (s.index as number) > (s.count as number)) {
    throw dataError('merge.badShard', `${store}: run "${runId}" records a malformed shard ${JSON.stringify(s)}`);
  }
  return { index: s.index as number, count: s.count as number };
}

/** Every committed run of every source store (in the order given). */
async function loadSources(stores: string[]): Promise<SourceRun[]> {
  const db = await createDb({ threads: 1 });
  try {
    return await withConnection(db, async (conn) => {
      const out: SourceRun[] = [];
      for (const store of stores) {
        for (const runId of await listCommittedRuns(store)) {
          const run = await readRunRow(conn, store, runId);
          let config: Record<string, unknown>;
          try {
            config = JSON.parse(run.config) as Record<string, unknown>;
          } catch {
            throw dataError('merge.badRun', `${store}: run "${runId}" has a runs.config that is not JSON`);
          }
          out.push({ store, run, config, shard: parseShard(store, runId, config) });
        }
      }
      return out;
    });
  } finally {
    db.closeSync();
  }
}

/** The configuration shards must share: everything but the shard and the adjustments each made on its own. */
const sharedConfig = (c: Record<string, unknown>) => {
  const { shard: _s, request_adjustments: _a, ...rest } = c;
  return rest;
};

/** The first top-level key whose value differs between two configurations. */
function firstDifference(a: Record<string, unknown>, b: Record<string, unknown>): string {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) return k;
  return '(key order)';
}

/** Checks that `copies` are exactly the N shards of one run with one configuration; returns them by index. */
function checkShards(runId: string, copies: SourceRun[]): SourceRun[] {
  const where = (c: SourceRun) => `${c.store}${c.shard ? ` (shard ${c.shard.index}/${c.shard.count})` : ''}`;
  const unsharded = copies.find((c) => c.shard === null);
  if (unsharded) throw dataError('merge.conflict', `run id "${runId}" is in ${copies.map(where).join(' and ')}: conflicting runs with one id (only the shards of one run merge)`);
  const first = copies[0]!;
  const count = first.shard!.count;
  const byIndex = new Map<number, SourceRun>();
  for (const c of copies) {
    if (c.shard!.count !== count) throw dataError('merge.mixedConfig', `run "${runId}": ${where(first)} and ${where(c)} split the run into different numbers of shards`);
    const other = byIndex.get(c.shard!.index);
    if (other) throw dataError('merge.conflict', `run "${runId}": shard ${c.shard!.index}/${count} is in both ${other.store} and ${c.store}`);
    byIndex.set(c.shard!.index, c);
    const a = sharedConfig(first.config);
    const b = sharedConfig(c.config);
    if (JSON.stringify(a) !== JSON.stringify(b)) throw dataError('merge.mixedConfig', `run "${runId}": ${where(first)} and ${where(c)} have different configurations (${firstDifference(a, b)} differs)`);
    for (const k of ['source', 'suite', 'seed', 'epochs', 'standoff_version'] as const) {
      if (c.run[k] !== first.run[k]) throw dataError('merge.mixedConfig', `run "${runId}": ${where(first)} and ${where(c)} differ in ${k} (${JSON.stringify(first.run[k])} vs ${JSON.stringify(c.run[k])})`);
    }
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0) throw dataError('merge.missingShards', `run "${runId}": shard(s) ${missing.map((i) => `${i}/${count}`).join(', ')} missing (have ${[...byIndex.keys()].sort((x, y) => x - y).map((i) => `${i}/${count}`).join(', ')})`);
  return [...byIndex.values()].sort((x, y) => x.shard!.index - y.shard!.index);
}

/** Groups the sources' runs by id and checks them against OUT and each other (nothing written yet). */
export function planMerge(out: string, runs: SourceRun[]): Array<{ runId: string; copies: SourceRun[] }> {
  const byId = new Map<string, SourceRun[]>();
  for (const r of runs) byId.set(r.run.run_id, [...(byId.get(r.run.run_id) ?? []), r]);
  const items: Array<{ runId: string; copies: SourceRun[] }> = [];
  for (const [runId, copies] of [...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (isRunCommitted(out, runId)) throw dataError('merge.conflict', `run "${runId}" (from ${copies[0]!.store}) already exists in ${out}; nothing was merged`);
    const single = copies.length === 1 && (copies[0]!.shard === null || copies[0]!.shard.count === 1);
    items.push({ runId, copies: single ? copies : checkShards(runId, copies) });
  }
  return items;
}

/** Copies one run's partitions byte for byte into OUT (staged, then committed with `runs` last). */
async function copyRun(conn: DuckDBConnection, out: string, src: SourceRun): Promise<Partial<Record<TableName, number>>> {
  const runId = src.run.run_id;
  const { tag, tmp } = await createStaging(out, runId);
  const counts: Partial<Record<TableName, number>> = {};
  try {
    const tables: TableName[] = [];
    for (const table of TABLE_NAMES) {
      const from = fileOf(src.store, table, runId);
      if (!existsSync(from)) continue;
      const r = await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${quoteLiteral(from)})`);
      counts[table] = Number(r.getRowObjectsJS()[0]!.n);
      const dir = partitionDir(tmp, table, runId);
      await mkdir(dir, { recursive: true });
      for (const name of readdirSync(partitionDir(src.store, table, runId))) {
        if (name.endsWith('.parquet')) await copyFile(join(partitionDir(src.store, table, runId), name), join(dir, name));
      }
      await fsyncPath(join(dir, 'data.parquet'));
      tables.push(table);
    }
    await commitStaged(out, tmp, tag, runId, { tables: tables.filter((t) => t !== 'runs') });
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw writeFailed(runId, out, err, 'merge');
  }
  await rm(tmp, { recursive: true, force: true });
  return counts;
}

/** Unit key of a row: its episode, or for the probe tables its (subject, scenario, epoch). */
const UNIT_KEY_SQL = (cols: Set<string>): string | null =>
  cols.has('episode_id') ? `"episode_id"` : cols.has('subject_model') && cols.has('scenario_id') && cols.has('epoch') ? `"subject_model" || chr(0) || "scenario_id" || chr(0) || CAST("epoch" AS VARCHAR)` : null;

/** The SELECT list that reads a table's file columns back as the JS values a run's rows hold. */
function rowSelect(table: TableName): string {
  return fileColumns(table)
    .map((c) => (c.type === 'TIMESTAMP' ? `strftime(${quoteIdent(c.name)}, '%Y-%m-%dT%H:%M:%S.%gZ')` : quoteIdent(c.name)) + ` AS ${quoteIdent(c.name)}`)
    .join(', ');
}

/**
 * Units of the merged run: each shard's episodes, numbered in shard order, with their rank in the
 * unsharded order (subject, scenario, epoch). Keys: the episode id and (subject, scenario, epoch).
 */
type Units = { unitOf: Map<string, number>; rank: number[] };

async function unitsOf(conn: DuckDBConnection, shards: SourceRun[], runId: string): Promise<Units> {
  // A shard can hold no unit (more shards than units): it has no episodes partition.
  const files = shards.map((s) => fileOf(s.store, 'episodes', runId)).filter((f) => existsSync(f));
  if (files.length === 0) return { unitOf: new Map(), rank: [] };
  const r = await conn.runAndReadAll(
    `SELECT episode_id, subject_model || chr(0) || scenario_id || chr(0) || CAST(epoch AS VARCHAR) AS k, row_number() OVER (ORDER BY subject_model, scenario_id, epoch) - 1 AS rnk FROM read_parquet([${files.map(quoteLiteral).join(', ')}], filename = true, file_row_number = true) ORDER BY list_position([${files.map(quoteLiteral).join(', ')}], filename), file_row_number`,
  );
  const unitOf = new Map<string, number>();
  const rank: number[] = [];
  for (const row of r.getRowObjectsJS()) {
    const u = rank.length;
    if (unitOf.has(row.episode_id as string)) throw dataError('merge.overlap', `run "${runId}": episode "${row.episode_id as string}" is in more than one shard`);
    unitOf.set(row.episode_id as string, u);
    unitOf.set(row.k as string, u);
    rank.push(Number(row.rnk));
  }
  return { unitOf, rank };
}

/** Appends one table of every shard, rows in file order, each to its unit; one chunk (~2,048 rows) in memory at a time. */
async function appendTable(conn: DuckDBConnection, writer: RunWriter, table: TableName, shards: SourceRun[], runId: string, unitOf: Map<string, number>): Promise<void> {
  const names = fileColumns(table).map((c) => c.name);
  const key = UNIT_KEY_SQL(new Set(names));
  for (const s of shards) {
    const file = fileOf(s.store, table, runId);
    if (!existsSync(file)) continue;
    if (key === null) throw dataError('merge.badRun', `run "${runId}": table ${table} has no episode key, so its shards cannot be merged`);
    const result = await conn.stream(`SELECT ${key} AS "__unit", ${rowSelect(table)} FROM read_parquet(${quoteLiteral(file)})`);
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const cols = chunk.convertColumns(JSDuckDBValueConverter) as unknown[][];
      for (let i = 0; i < chunk.rowCount; i++) {
        const unit = unitOf.get(cols[0]![i] as string);
        if (unit === undefined) throw dataError('merge.badRun', `${s.store}: a ${table} row of run "${runId}" belongs to no episode of its shard`);
        const row: Record<string, unknown> = { run_id: runId };
        names.forEach((name, k) => (row[name] = toPlain(cols[k + 1]![i])));
        await writer.append(table, [row], unit);
      }
    }
  }
}

/** The notes of the merged run: each part once, in first-seen order; the counts of a part that starts with a count ("3 episode(s) ...", "resumed: 4 of 9 ...") summed over the shards. */
export function mergeNotes(notes: Array<string | null>): string | null {
  if (notes.every((n) => n === null)) return null;
  const parts = new Map<string, { text: string[]; n: number[] | null }>();
  for (const note of notes) {
    for (const part of (note ?? '').split('; ').filter((p) => p !== '')) {
      const counted = /^(\d+ |resumed: \d+ of \d+ )/.test(part);
      const pieces = part.split(/(\d+)/); // text, number, text, ...
      const text = pieces.filter((_, i) => i % 2 === 0);
      const n = pieces.filter((_, i) => i % 2 === 1).map(Number);
      const key = counted ? text.join('#') : part;
      const seen = parts.get(key);
      if (!seen) parts.set(key, { text, n: counted ? n : null });
      else if (seen.n) seen.n = seen.n.map((x, i) => x + n[i]!);
    }
  }
  return [...parts.entries()].map(([key, p]) => (p.n ? p.text.map((t, i) => (i < p.n!.length ? `${t}${p.n![i]}` : t)).join('') : key)).join('; ');
}

/**
 * The merged run's `runs` row: the shards' common configuration without `shard`, the union of
 * their request adjustments (in shard order), the earliest `created_at`, status `error` when any
 * shard's is, and the notes merged (`mergeNotes`). What can differ from the unsharded run: the
 * timestamps and latencies every run has, the adjustments' order when shards refused parameters in
 * different orders, and the order of notes that only some shards carry.
 */
export function mergedRunRow(shards: Array<Pick<SourceRun, 'run' | 'config'>>): RunRow {
  const first = shards[0]!;
  const adjustments: unknown[] = [];
  const seen = new Set<string>();
  for (const s of shards) {
    for (const a of (s.config.request_adjustments as unknown[] | undefined) ?? []) {
      const k = JSON.stringify(a);
      if (!seen.has(k)) adjustments.push(a), seen.add(k);
    }
  }
  const { shard: _s, ...config } = first.config;
  if ('request_adjustments' in config) config.request_adjustments = adjustments;
  const statuses = shards.map((s) => s.run.status);
  return {
    ...first.run,
    created_at: shards.map((s) => s.run.created_at).sort()[0]!,
    status: statuses.includes('error') ? 'error' : statuses.includes('partial') ? 'partial' : statuses.includes('cancelled') ? 'cancelled' : 'success',
    config: JSON.stringify(config),
    notes: mergeNotes(shards.map((s) => s.run.notes)),
  };
}

/** Merges the shards of one run into OUT through a RunWriter (rows in the unsharded order). */
async function mergeShards(conn: DuckDBConnection, out: string, runId: string, shards: SourceRun[], units: Units): Promise<Partial<Record<TableName, number>>> {
  const writer = await RunWriter.open(out, runId, { trusted: true });
  try {
    for (const table of TABLE_NAMES) if (table !== 'runs') await appendTable(conn, writer, table, shards, runId, units.unitOf);
    await writer.finish(mergedRunRow(shards), units.rank);
    return (await writer.commit()).tables;
  } finally {
    await writer.abort();
  }
}

/** `standoff merge OUT STORE...` (see the module comment). */
export async function mergeStores(out: string, stores: string[]): Promise<MergeResult> {
  if (stores.length === 0) throw usageError('merge.noSources', 'pass at least one source store: standoff merge OUT STORE...');
  const outAbs = resolve(out);
  for (const s of stores) {
    if (resolve(s) === outAbs) throw usageError('merge.outIsSource', `${s} is both the output and a source store`);
    if (!(await storeExists(s))) throw storeError('merge.noStore', `source store ${s} does not exist`);
  }
  if (new Set(stores.map((s) => resolve(s))).size !== stores.length) throw usageError('merge.sameSource', 'a source store is given twice');
  const items = planMerge(out, await loadSources(stores));
  const db = await createDb({ threads: 1, memoryLimit: '512MB' });
  try {
    return await withConnection(db, async (conn) => {
      // Every check that reads rows (overlapping episodes) runs before anything is written.
      const units = new Map<string, Units>();
      for (const { runId, copies } of items) if (isSharded(copies)) units.set(runId, await unitsOf(conn, copies, runId));
      if (!(await storeExists(out))) await mkdir(out, { recursive: true });
      await cleanupStore(out);
      const runs: MergeResult['runs'] = [];
      for (const { runId, copies } of items) {
        const u = units.get(runId);
        const tables = u ? await mergeShards(conn, out, runId, copies, u) : await copyRun(conn, out, copies[0]!);
        runs.push({ runId, kind: u ? 'shards' : 'copy', sources: copies.map((c) => c.store), tables });
      }
      return { out, runs };
    });
  } finally {
    db.closeSync();
  }
}

const isSharded = (copies: SourceRun[]) => copies.length > 1 || copies[0]!.shard !== null;
