/**
 * Reads the episodes `reports/index.html` points at: the members of every episode set
 * (`episode-sets.ts`), their episode rows, scores and judge verdicts, and their transcripts from
 * the `messages` table. Every value reaches SQL as a bound parameter (lists of ids as LIST
 * parameters); nothing is interpolated.
 *
 * Size, so the page stays under 20 MB:
 * - a set lists at most {@link SET_LIST_CAP} episodes, and all sets together at most
 *   {@link MAX_EMBEDDED_EPISODES} distinct ones (sets are filled in page order; a set that would
 *   add more lists a prefix); a set listing fewer than its count says so, and its query gets all;
 * - the embedded episode data (rows, scores, verdicts and transcripts, as the page's JSON) stays
 *   within {@link DATA_BUDGET_BYTES}: transcripts are added in (run_id, episode_id) order while
 *   their exact JSON fits; an episode past it keeps its row, scores and verdicts, and the page
 *   says how many transcripts were left out, with the `standoff sql` query for each.
 * Determinism: every query orders by all its keys; the budget is spent in a fixed order.
 */
import { BOOLEAN, INTEGER, LIST, VARCHAR, listValue, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { query, toQueryResult, type Plain } from '../../store/duckdb.ts';
import { reportError } from '../sections/context.ts';
import { toScriptJson } from './script-json.ts';
import { isO1Data } from '../../schema/tables.ts';
import { maskSecretPatterns } from '../../redact.ts';
import { JUDGE_BATCH_MAX_JUDGES, JUDGE_BATCH_MAX_JUDGMENTS, JUDGE_MODELS_SQL, judgeBatchSql, pivotJudges } from './judge-batch.ts';
import { SET_ORDER, toStandaloneSql, withoutOrder, type EpisodeSetDef, type SubjectSource } from './episode-sets.ts';

/** Episodes listed per set (a larger set says how many more there are and gives its query). */
export const SET_LIST_CAP = 1000;
/** Distinct episodes embedded at most (over all sets). */
export const MAX_EMBEDDED_EPISODES = 5000;
/** Bytes of embedded episode data (the page's JSON) at most: with Vega and the report, index.html stays under 20 MB. */
export const DATA_BUDGET_BYTES = 16 * 1000 * 1000;
/** Up to this many samples in the report, every linked count gets its set query. */
export const ALL_SETS_MAX_SAMPLES = 200_000;
/** Above it, the set queries' scans are bounded: at most this many samples scanned in all (sets in page order, at least {@link MIN_SET_QUERIES}). */
export const SET_SCAN_BUDGET = 50_000_000;
export const MIN_SET_QUERIES = 8;

/** How many set queries a report over `samples` samples runs (each scans the store once): all up to {@link ALL_SETS_MAX_SAMPLES}, then a bounded number. */
export function setQueryCap(samples: number): number {
  return samples <= ALL_SETS_MAX_SAMPLES ? Number.POSITIVE_INFINITY : Math.max(MIN_SET_QUERIES, Math.floor(SET_SCAN_BUDGET / samples));
}

export interface BrowserMessage {
  seq: number;
  role: string;
  content: string | null;
  reasoning: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  tool_args: string | null;
  tool_ok: boolean | null;
  tool_error: string | null;
  finish_reason: string | null;
  discarded: boolean | null;
}

export interface BrowserEpisode {
  run_id: string;
  episode_id: string;
  subject: string;
  /** The run's suite (its task). */
  suite: string;
  /** A Standoff O1 episode (recognised by its run's data, `isO1Data`): the page shows Standoff's fields (decision, log reads, evidence) only for these. */
  standoff: boolean;
  /** Sample metadata (JSON text) as stored; null when none. */
  metadata: string | null;
  scenario_id: string;
  epoch: number;
  status: string;
  reason: string | null;
  target: string | null;
  decision_tool: string | null;
  decision_args: string | null;
  gathered_evidence: boolean | null;
  log_reads: number | null;
  turns: number | null;
  scores: { scorer: string; value: number | null; answer: string | null; noanswer: boolean; explanation: string | null }[];
  judgments: { scorer: string; judge_model: string; verdict: string | null; value: number | null; excluded_self: boolean; raw: string | null }[];
  /** Messages in seq order; null when left out by the size budget. */
  messages: BrowserMessage[] | null;
  /** Stored messages (also when they were left out). */
  message_count: number;
}

export interface BrowserSet {
  key: string;
  title: string;
  count: number;
  /** The set's definition with its values written in, for `standoff sql`. */
  sql: string;
  /** Indices into `episodes`, in the set's order (at most SET_LIST_CAP). */
  members: number[];
  /** The scorer the set is about (its list shows that scorer's value and answer), or null. */
  scorer: string | null;
  /** The number a cell linked to it must print (`EpisodeSetDef.shows`; checked when index.html is built), if any. */
  shows?: number;
}

export interface EpisodeBrowserData {
  sets: BrowserSet[];
  episodes: BrowserEpisode[];
  /** Messages stored for any listed episode (false: the store has no transcripts for them). */
  has_messages: boolean;
  /** Episodes whose transcript the data budget left out (their messages are null). */
  transcripts_omitted: number;
  budget_bytes: number;
  set_list_cap: number;
  max_episodes: number;
  /** Linked counts whose set was not queried (the set-query cap of a large store): shown without a link, their number said on the page. */
  sets_left_out: number;
}

type Conn = Pick<DuckDBConnection, 'runAndReadAll'>;

const str = (v: Plain) => (v === null || v === undefined ? null : String(v));
const num = (v: Plain) => (v === null || v === undefined ? null : Number(v));
const bool = (v: Plain) => (v === null || v === undefined ? null : v === true);

/** The report's subject labels and where each comes from. */
export async function loadSubjectSources(q: (sql: string) => Promise<Record<string, Plain>[]>): Promise<SubjectSource[]> {
  const rows = await q(`SELECT subject, run_id, subject_model FROM r_subject ORDER BY subject, run_id, subject_model`);
  return rows.map((r) => ({ subject: String(r.subject), run_id: String(r.run_id), subject_model: String(r.subject_model) }));
}

/** Everything the episode browser embeds, for the sets the report's counts point at. */
export async function loadEpisodeBrowser(
  conn: Conn,
  defs: EpisodeSetDef[],
  sources: SubjectSource[],
  opts: { budgetBytes?: number; listCap?: number; maxEpisodes?: number; maxSets?: number; batch?: boolean } = {},
): Promise<EpisodeBrowserData> {
  const all = defs;
  defs = all.slice(0, Math.max(0, opts.maxSets ?? all.length));
  const budget = opts.budgetBytes ?? DATA_BUDGET_BYTES;
  const cap = opts.listCap ?? SET_LIST_CAP;
  const read = await readAllMembers(conn, defs, cap, opts.batch);
  const members = toBoundedMembers(read, opts.maxEpisodes ?? MAX_EMBEDDED_EPISODES);
  const ids = uniqueIds(members.flat());
  const episodes = await readEpisodes(conn, ids, sources);
  const index = new Map(episodes.map((e, i) => [idKey(e.run_id, e.episode_id), i]));
  const sets: BrowserSet[] = defs.map((d, i) => ({ key: d.key, title: d.title, count: d.count, sql: toStandaloneSql(d), members: members[i].map((m) => index.get(idKey(m[0], m[1]))!), scorer: d.scorer ?? (typeof d.params.scorer === 'string' ? d.params.scorer : null), ...(d.shows === undefined ? {} : { shows: d.shows }) }));
  const metadata = episodes.reduce((a, e) => a + jsonBytes(e), 0);
  const omitted = await attachTranscripts(conn, episodes, budget - metadata);
  return { sets, episodes, has_messages: episodes.some((e) => e.message_count > 0), transcripts_omitted: omitted, budget_bytes: budget, set_list_cap: cap, max_episodes: opts.maxEpisodes ?? MAX_EMBEDDED_EPISODES, sets_left_out: all.length - defs.length };
}

const idKey = (run: string, ep: string) => `${run}\u0000${ep}`;

/** Bytes a value takes in the page (its script-safe JSON). */
const jsonBytes = (v: unknown) => Buffer.byteLength(toScriptJson(v), 'utf8');

/** Each set's longest prefix that keeps the distinct episodes over all sets within `max` (sets in order). */
export function toBoundedMembers(sets: [string, string][][], max: number): [string, string][][] {
  const chosen = new Set<string>();
  return sets.map((list) => {
    const kept: [string, string][] = [];
    for (const id of list) {
      const k = idKey(id[0], id[1]);
      if (!chosen.has(k)) {
        if (chosen.size >= max) break;
        chosen.add(k);
      }
      kept.push(id);
    }
    return kept;
  });
}

function uniqueIds(ids: [string, string][]): [string, string][] {
  const seen = new Map<string, [string, string]>();
  for (const id of ids) seen.set(idKey(id[0], id[1]), id);
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}

/** Every set's members (first `cap` each): sets sharing a `batch` query in one pass per batch, the others one query each (one connection: one query at a time). */
export async function readAllMembers(conn: Conn, defs: EpisodeSetDef[], cap: number, batch = true, maxJudgments = JUDGE_BATCH_MAX_JUDGMENTS): Promise<[string, string][][]> {
  const read: [string, string][][] = new Array(defs.length);
  for (const group of batchGroups(defs, batch)) {
    if (group.length === 1) read[group[0]] = await readMembers(conn, defs[group[0]], cap);
    else {
      const sets = group.map((i) => defs[i]);
      (await (sets[0].judge !== undefined ? readJudgeBatch(conn, sets, cap, maxJudgments) : readBatch(conn, sets, cap))).forEach((m, k) => (read[group[k]] = m));
    }
  }
  return read;
}

/** The parameter names and types of a set, sorted: sets batch together only with the same ones. */
const paramShape = (d: EpisodeSetDef) => Object.keys(d.params).sort().map((k) => `${k}:${typeof d.params[k]}`).join(',');

/**
 * Rows a batched query handles at most (its sets' counts summed), else its sets go one query each.
 * A batch joins every row of its definition (all subjects) to the sets' values and groups them by
 * set; one set's own query reads only its subject's rows (both keep the first members by
 * `arg_min(..., cap)`). So batching wins on many small sets (the 16 grounded-vs-lucky cells at 1e6,
 * 667,000 rows: 2.0 -> 0.7 s of CPU) and loses on large ones (at 1e7 two subjects' every-episode
 * sets, 5M rows: 12 -> 40 s; a batch of half the subjects' measured sets at 1e6: 2.8 -> 4.7 s).
 * Rechecked with the one-pass set query (session 10): at 1e6, a bound of 1.1M (the every-episode,
 * evidence and alignment groups, 1M rows each, batched) took 11.4 s of the step's SQL CPU against
 * 10.5 s at 750,000.
 */
export const BATCH_MAX_ROWS = 750_000;

/**
 * Indices of `defs` by batch (each group in page order, groups in order of their first set); a
 * set without a batch (or counting items), or of a group whose counts pass `maxRows`, alone. The
 * judge sets of one scorer (`judge`) form one group at any size: their one pass reads what each of
 * their own queries reads (`judge-batch.ts`).
 */
export function batchGroups(defs: EpisodeSetDef[], batch = true, maxRows = BATCH_MAX_ROWS): number[][] {
  const groups = new Map<string, number[]>();
  defs.forEach((d, i) => {
    const key = !batch || d.items !== undefined ? `#${i}` : d.judge !== undefined ? `judge\u0000${d.judge.scorer}` : d.batch !== undefined ? `${d.batch}\u0000${paramShape(d)}` : `#${i}`;
    const g = groups.get(key);
    if (g) g.push(i);
    else groups.set(key, [i]);
  });
  return [...groups.values()].flatMap((g) => (defs[g[0]].judge === undefined && g.reduce((s, i) => s + defs[i].count, 0) > maxRows ? g.map((i) => [i]) : [g]));
}

/**
 * Members of sets sharing one `batch` query, in one pass: the sets' values go in as LIST
 * parameters (the relation `p`, a row per set), one aggregate per set counts its rows and keeps
 * its first `cap` in SET_ORDER (`arg_min` with n: a bounded heap per set, no sort of the members;
 * NULL scenario or epoch last, as ORDER BY puts them); each set's count is checked as one query's.
 */
async function readBatch(conn: Conn, defs: EpisodeSetDef[], cap: number): Promise<[string, string][][]> {
  const names = Object.keys(defs[0].params).sort();
  const values: Record<string, DuckDBValue> = { set_idx: listValue(defs.map((_, i) => i)) };
  const types: Record<string, DuckDBType> = { set_idx: LIST(INTEGER) };
  names.forEach((n, k) => {
    values[`p${k}`] = listValue(defs.map((d) => d.params[n]));
    types[`p${k}`] = LIST(typeof defs[0].params[n] === 'boolean' ? BOOLEAN : VARCHAR);
  });
  const p = `SELECT unnest($set_idx) AS set_idx${names.map((n, k) => `, unnest($p${k}) AS "${n}"`).join('')}`;
  return readBatchRows(conn, defs, cap, { sql: `WITH p AS (${p}), b AS (${defs[0].batch})`, values, types });
}

/**
 * The judge sets of one scorer in one pass (`judge-batch.ts`), or one query each when the scorer
 * has more judges than a pivot holds or more than `maxJudgments` judgments.
 */
async function readJudgeBatch(conn: Conn, defs: EpisodeSetDef[], cap: number, maxJudgments: number): Promise<[string, string][][]> {
  const scorer = defs[0].judge!.scorer;
  const [{ judges: stored, n }] = (await query(conn as DuckDBConnection, JUDGE_MODELS_SQL, { scorer })).rows;
  const judges = pivotJudges(defs, ((stored as string[] | null) ?? []).map(String));
  if (judges.length > JUDGE_BATCH_MAX_JUDGES || Number(n) > maxJudgments) {
    const out: [string, string][][] = [];
    for (const d of defs) out.push(await readMembers(conn, d, cap));
    return out;
  }
  return readBatchRows(conn, defs, cap, judgeBatchSql(defs, judges));
}

/**
 * Runs a batch (`q.sql`: a WITH list ending in the relation `b` of set_idx, run_id, episode_id,
 * scenario_id, epoch): one aggregate per set counts its rows and keeps its first `cap` in
 * SET_ORDER; each set's count is checked as one query's.
 */
async function readBatchRows(conn: Conn, defs: EpisodeSetDef[], cap: number, q: { sql: string; values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> }): Promise<[string, string][][]> {
  const limit = Math.max(1, Math.floor(cap));
  const sql = `${q.sql},
t AS (SELECT set_idx, CAST(count(*) AS BIGINT) AS n, ${firstMembers(limit)} AS top FROM b GROUP BY set_idx)
SELECT set_idx, n, run_id, episode_id FROM (SELECT set_idx, n, unnest(top, recursive := true) FROM t) ORDER BY set_idx, run_id, scenario_id, epoch, episode_id`;
  const rows = toQueryResult(await conn.runAndReadAll(sql, q.values, q.types)).rows;
  const count = new Map<number, number>();
  const out: [string, string][][] = defs.map(() => []);
  for (const r of rows) {
    const i = Number(r.set_idx);
    count.set(i, Number(r.n));
    out[i].push([String(r.run_id), String(r.episode_id)]);
  }
  defs.forEach((d, i) => {
    const n = count.get(i) ?? 0;
    if (n !== d.count) throw reportError('episodeSetMismatch', 'data', `episode browser: "${d.key}" finds ${n} episodes but the report counts ${d.count}`);
  });
  return out;
}

/**
 * A set's first `limit` rows in SET_ORDER, as an aggregate: `arg_min` with n keeps a bounded heap
 * (no sort and no copy of the whole set); NULL scenario or epoch last, as ORDER BY puts them.
 */
const firstMembers = (limit: number) => `arg_min(struct_pack(run_id := run_id, episode_id := episode_id, scenario_id := scenario_id, epoch := epoch),
  struct_pack(r := run_id, sn := scenario_id IS NULL, s := scenario_id, en := epoch IS NULL, e := epoch, i := episode_id), ${limit})`;

/**
 * The set's members (first `cap`); its SQL must find exactly the count the report shows. One pass
 * of streaming aggregates over the set (its own ORDER BY dropped): its rows counted (and, for a
 * count of items, its distinct scenario x epoch items) while a bounded heap keeps the first `cap`,
 * which alone are ordered. (A window `count(*) OVER ()` before ORDER BY ... LIMIT kept a copy of
 * every row of the set: 264,516 for a judge pair at 1e6.) An empty set gives no row: n = 0.
 */
async function readMembers(conn: Conn, d: EpisodeSetDef, cap: number): Promise<[string, string][]> {
  const limit = Math.max(1, Math.floor(cap));
  const items = d.items === undefined ? '' : ', CAST(count(DISTINCT (scenario_id, epoch)) AS BIGINT) AS items';
  const sql = `WITH t AS (SELECT CAST(count(*) AS BIGINT) AS n${items}, ${firstMembers(limit)} AS top FROM (${d.direct ?? withoutOrder(d.sql)}))
SELECT * FROM (SELECT * EXCLUDE (top), unnest(top, recursive := true) FROM t) ${SET_ORDER}`;
  const rows = (await query(conn as DuckDBConnection, sql, d.params)).rows;
  const n = Number(rows[0]?.n ?? 0);
  if (n !== d.count) {
    throw reportError('episodeSetMismatch', 'data', `episode browser: "${d.key}" finds ${n} episodes but the report counts ${d.count}`);
  }
  // A count of items (a four-cell count): the set's samples cover exactly that many scenario x epoch items.
  const covered = Number(rows[0]?.items ?? 0);
  if (d.items !== undefined && covered !== d.items) throw reportError('episodeSetMismatch', 'data', `episode browser: "${d.key}" covers ${covered} items but the report counts ${d.items}`);
  return rows.slice(0, Math.max(0, Math.floor(cap))).map((r) => [String(r.run_id), String(r.episode_id)]);
}

/** Runs `sql` with the ids bound as the LIST parameters $runs and $eps (table `ids`). */
async function withIds(conn: Conn, ids: [string, string][], sql: string): Promise<Record<string, Plain>[]> {
  if (ids.length === 0) return [];
  const full = `WITH ids AS (SELECT unnest($runs) AS run_id, unnest($eps) AS episode_id) ${sql}`;
  const values: Record<string, DuckDBValue> = { runs: listValue(ids.map((x) => x[0])), eps: listValue(ids.map((x) => x[1])) };
  const reader = await conn.runAndReadAll(full, values, { runs: LIST(VARCHAR), eps: LIST(VARCHAR) });
  return toQueryResult(reader).rows;
}

async function readEpisodes(conn: Conn, ids: [string, string][], sources: SubjectSource[]): Promise<BrowserEpisode[]> {
  const rows = await withIds(
    conn,
    ids,
    `SELECT e.run_id, e.episode_id, e.subject_model, e.scenario_id, e.epoch, e.status,
            CASE WHEN e.status = 'invalid' THEN e.invalid_reason WHEN e.status = 'error' THEN e.error END AS reason,
            e.target, e.decision_tool, e.decision_args, e.gathered_evidence, e.log_reads, e.turns, e.metadata, r.suite, r.source
     FROM episodes e JOIN ids USING (run_id, episode_id) JOIN runs r ON r.run_id = e.run_id ORDER BY e.run_id, e.episode_id`,
  );
  const scores = await withIds(conn, ids, `SELECT s.* FROM scores s JOIN ids USING (run_id, episode_id) ORDER BY ALL`);
  const judgments = await withIds(conn, ids, `SELECT j.run_id, j.episode_id, j.scorer, j.judge_model, j.verdict, j.value, j.excluded_self, j.raw FROM judgments j JOIN ids USING (run_id, episode_id) ORDER BY ALL`);
  const label = (run: string, model: string) => sources.find((s) => s.run_id === run && s.subject_model === model)?.subject ?? model;
  const group = <T>(list: Record<string, Plain>[], map: (r: Record<string, Plain>) => T) => {
    const m = new Map<string, T[]>();
    for (const r of list) {
      const k = idKey(String(r.run_id), String(r.episode_id));
      const list = m.get(k);
      if (list) list.push(map(r));
      else m.set(k, [map(r)]);
    }
    return m;
  };
  const byScore = group(scores, (r) => ({ scorer: String(r.scorer), value: num(r.value), answer: str(r.answer), noanswer: r.noanswer === true, explanation: str(r.explanation) }));
  const byJudge = group(judgments, (r) => ({ scorer: String(r.scorer), judge_model: String(r.judge_model), verdict: str(r.verdict), value: num(r.value), excluded_self: r.excluded_self === true, raw: str(r.raw) }));
  const standoff = standoffRuns(rows, scores);
  return rows.map((r) => {
    const k = idKey(String(r.run_id), String(r.episode_id));
    return {
      run_id: String(r.run_id),
      episode_id: String(r.episode_id),
      subject: label(String(r.run_id), String(r.subject_model)),
      suite: String(r.suite),
      standoff: standoff.has(String(r.run_id)),
      // Stored metadata can hold what a CSV column or a log carried (an endpoint URL with its password): masked like config values.
      metadata: r.metadata === null || r.metadata === undefined ? null : maskSecretPatterns(String(r.metadata)),
      scenario_id: String(r.scenario_id),
      epoch: Number(r.epoch),
      status: String(r.status),
      reason: str(r.reason),
      target: str(r.target),
      decision_tool: str(r.decision_tool),
      decision_args: str(r.decision_args),
      gathered_evidence: bool(r.gathered_evidence),
      log_reads: num(r.log_reads),
      turns: num(r.turns),
      scores: byScore.get(k) ?? [],
      judgments: byJudge.get(k) ?? [],
      messages: null,
      message_count: 0,
    };
  });
}

/**
 * The runs whose episodes are Standoff O1 episodes, recognised by their data as the report
 * recognises the O1 suite (`isO1Data`: a Standoff source, the O1 task, or two of O1's scorers
 * among the scorers of the run's listed samples).
 */
function standoffRuns(episodes: Record<string, Plain>[], scores: Record<string, Plain>[]): Set<string> {
  const scorers = new Map<string, Set<string>>();
  for (const s of scores) {
    const run = String(s.run_id);
    if (!scorers.has(run)) scorers.set(run, new Set());
    scorers.get(run)!.add(String(s.scorer));
  }
  const out = new Set<string>();
  for (const e of episodes) {
    const run = String(e.run_id);
    if (out.has(run)) continue;
    if (isO1Data({ source: String(e.source), suite: String(e.suite), scorers: [...(scorers.get(run) ?? [])] })) out.add(run);
  }
  return out;
}

/**
 * Attaches transcripts in episode order while their JSON fits `budget` bytes (candidates picked by
 * their stored text size, then measured exactly); returns how many episodes with messages were
 * left without theirs.
 */
async function attachTranscripts(conn: Conn, episodes: BrowserEpisode[], budget: number): Promise<number> {
  const ids = episodes.map((e): [string, string] => [e.run_id, e.episode_id]);
  const sizes = await withIds(
    conn,
    ids,
    `SELECT m.run_id, m.episode_id, CAST(count(*) AS BIGINT) AS n,
            CAST(sum(coalesce(strlen(m.content), 0) + coalesce(strlen(m.reasoning), 0) + coalesce(strlen(m.tool_args), 0) + coalesce(strlen(m.tool_error), 0) + 200) AS BIGINT) AS bytes
     FROM messages m JOIN ids USING (run_id, episode_id) GROUP BY ALL ORDER BY ALL`,
  );
  const size = new Map(sizes.map((r) => [idKey(String(r.run_id), String(r.episode_id)), { n: Number(r.n), bytes: Number(r.bytes) }]));
  const chosen: [string, string][] = [];
  let spent = 0;
  let omitted = 0;
  for (const e of episodes) {
    const s = size.get(idKey(e.run_id, e.episode_id));
    if (!s) continue;
    e.message_count = s.n;
    if (spent + s.bytes <= budget) {
      spent += s.bytes;
      chosen.push([e.run_id, e.episode_id]);
    } else omitted++;
  }
  const rows = await withIds(
    conn,
    chosen,
    `SELECT m.run_id, m.episode_id, m.seq, m.role, m.content, m.reasoning, m.tool_call_id, m.tool_name, m.tool_args, m.tool_ok, m.tool_error, m.finish_reason, m.discarded
     FROM messages m JOIN ids USING (run_id, episode_id) ORDER BY m.run_id, m.episode_id, m.seq, m.role, m.tool_call_id`,
  );
  const byEpisode = new Map<string, BrowserMessage[]>();
  for (const r of rows) {
    const k = idKey(String(r.run_id), String(r.episode_id));
    const list = byEpisode.get(k) ?? [];
    list.push({
      seq: Number(r.seq),
      role: String(r.role),
      content: str(r.content),
      reasoning: str(r.reasoning),
      tool_call_id: str(r.tool_call_id),
      tool_name: str(r.tool_name),
      tool_args: str(r.tool_args),
      tool_ok: bool(r.tool_ok),
      tool_error: str(r.tool_error),
      finish_reason: str(r.finish_reason),
      discarded: bool(r.discarded),
    });
    byEpisode.set(k, list);
  }
  let left = budget;
  for (const e of episodes) {
    const m = byEpisode.get(idKey(e.run_id, e.episode_id));
    if (!m) continue;
    const bytes = jsonBytes(m);
    if (bytes <= left) {
      e.messages = m;
      left -= bytes;
    } else omitted++;
  }
  return omitted;
}
