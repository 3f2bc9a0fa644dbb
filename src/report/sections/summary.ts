/**
 * Section 1: run summary (runs, subjects, judges, scenarios, epochs, temperature, seed, samples,
 * input hashes) and the structural gate.
 *
 * The gate is the project's publication gate (`validateRun`, src/store/validate-run.ts: run status,
 * sample counts, required scorers present and measured on every sample, judge errors within the
 * `--allow-judge-errors` allowance, zero sample errors, distinct subject models, unique episode
 * ids), run on every run with: the three O1 scorers required for runner and
 * synthetic runs (for imported runs, every scorer that appears in the run), and scenarios x epochs
 * expected samples per subject where the run records its epochs. With several runs (arms) two
 * checks are added across them: equal sample counts per subject, and no subject model in two runs.
 * A failed gate does not stop the report; it is shown at the top with every failure listed.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TABLE_NAMES } from '../../schema/tables.ts';
import { partitionDir } from '../../store/write-run.ts';
import { byText, cell, code, fmtCount, fmtCountOf, table } from '../markdown.ts';
import { validateStore } from '../../store/validate-run.ts';
import { REPORT_MEMORY_LIMIT, type ReportContext } from './context.ts';

export interface RunHash {
  run_id: string;
  /** SHA-256 over the `sha256sum`-style lines of the run's Parquet files (sorted by path). */
  sha256: string;
  files: { path: string; bytes: number; sha256: string }[];
}

export interface RunSummaryRow {
  run_id: string;
  suite: string;
  source: string;
  status: string;
  created_at: string | null;
  seed: number | null;
  epochs: number | null;
  epochs_observed: number;
  temperature: number | null;
  subject_temperatures: Record<string, number>;
  /**
   * The agent prompt variant (`runs.config.prompt`: `neutral`, or `instructed` = told to read the
   * log); runs of standoff-protocol/1 used the instructed wording; null when not recorded.
   */
  prompt: string | null;
  subjects: string[];
  judges: string[];
  scenarios: number;
  samples: number;
  simulated: boolean;
  notes: string | null;
  standoff_version: string;
  sha256: string;
  /** Root hash of the states the run sealed (`runs.config.state_manifest.root`); null when not recorded. */
  states_root: string | null;
}

export interface GateCheck {
  check: string;
  /** The run checked; null for a check across the runs of a suite. */
  run: string | null;
  passed: boolean;
  detail: string;
  failures: string[];
}

export interface SummaryResult {
  runs: RunSummaryRow[];
  totals: {
    runs: number;
    /** Subjects, each counted once (with several tasks: distinct subject models). */
    subjects: number;
    judges: number;
    scenarios: number;
    samples: number;
    epochs: number[];
    /** With several tasks (suites): items per task; item ids of different tasks are not one item. */
    tasks?: { task: string; items: number }[];
  };
  subjects: string[];
  judges: string[];
  hashes: RunHash[];
  gate: {
    passed: boolean;
    checks: GateCheck[];
    /** Judge verdicts over the reported runs, how many are ERROR (failed judge calls), and the allowance. */
    judge_verdicts: { total: number; errors: number; allowed: number };
  };
}

async function sha256File(path: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: h.digest('hex'), bytes };
}

/** Hashes every Parquet file of a run (all tables), and the run as a whole. */
export async function hashRun(storeDir: string, runId: string): Promise<RunHash> {
  const files: RunHash['files'] = [];
  for (const t of [...TABLE_NAMES].sort(byText)) {
    const dir = partitionDir(storeDir, t, runId);
    if (!existsSync(dir)) continue;
    for (const f of (await readdir(dir)).filter((x) => x.endsWith('.parquet')).sort(byText)) {
      const rel = `${t}/run_id=${runId}/${f}`;
      files.push({ path: rel, ...(await sha256File(join(dir, f))) });
    }
  }
  const sha256 = createHash('sha256')
    .update(files.map((f) => `${f.sha256}  ${f.path}\n`).join(''))
    .digest('hex');
  return { run_id: runId, sha256, files };
}

function subjectTemperatures(config: Record<string, unknown> | null): Record<string, number> {
  const out: Record<string, number> = {};
  const subjects = config?.subjects;
  if (Array.isArray(subjects)) {
    for (const s of subjects) {
      if (s && typeof s === 'object' && typeof (s as Record<string, unknown>).model === 'string' && typeof (s as Record<string, unknown>).temperature === 'number') {
        out[(s as Record<string, string>).model] = (s as Record<string, number>).temperature;
      }
    }
  }
  return out;
}

/** True when the run says its subjects are simulated (sim: models, synthetic source, or notes/config saying so). */
function isSimulated(run: ReportContext['runs'][number], subjects: string[]): boolean {
  if (run.source === 'synthetic') return true;
  if (subjects.length > 0 && subjects.every((s) => s.startsWith('sim:'))) return true;
  const text = `${run.notes ?? ''} ${JSON.stringify(run.config ?? {})}`.toLowerCase();
  return /simulated|synthetic/.test(text);
}

export async function runSummary(ctx: ReportContext): Promise<SummaryResult> {
  const per = await ctx.q(`
    SELECT run_id, CAST(count(*) AS BIGINT) AS samples, CAST(count(DISTINCT scenario_id) AS BIGINT) AS scenarios,
           CAST(max(epoch) AS BIGINT) AS max_epoch,
           list(DISTINCT subject_model ORDER BY subject_model) AS subjects
    FROM episodes GROUP BY run_id ORDER BY run_id`);
  const judgeRows = await ctx.q(`SELECT run_id, list(DISTINCT judge_model ORDER BY judge_model) AS judges FROM judgments GROUP BY run_id ORDER BY run_id`);
  const judgesByRun = new Map(judgeRows.map((r) => [String(r.run_id), (r.judges as string[]).map(String)]));
  const byRun = new Map(per.map((r) => [String(r.run_id), r]));
  const hashes: RunHash[] = [];
  for (const id of ctx.runIds) hashes.push(await hashRun(ctx.storeDir, id));
  const hashBy = new Map(hashes.map((h) => [h.run_id, h.sha256]));

  const runs: RunSummaryRow[] = ctx.runs.map((r) => {
    const p = byRun.get(r.run_id);
    const subjects = p ? (p.subjects as string[]).map(String) : [];
    const temps = subjectTemperatures(r.config);
    return {
      run_id: r.run_id,
      suite: r.suite,
      source: r.source,
      status: r.status,
      created_at: r.created_at,
      seed: r.seed,
      epochs: r.epochs,
      epochs_observed: p ? Number(p.max_epoch) : 0,
      temperature: r.temperature,
      subject_temperatures: temps,
      prompt: promptVariant(r.config),
      subjects,
      judges: judgesByRun.get(r.run_id) ?? [],
      scenarios: p ? Number(p.scenarios) : 0,
      samples: p ? Number(p.samples) : 0,
      simulated: isSimulated(r, subjects),
      notes: r.notes,
      standoff_version: r.standoff_version,
      sha256: hashBy.get(r.run_id) ?? '',
      states_root: statesRoot(r.config),
    };
  });
  // With at most one group (one run), that group is every episode: the totals are its counts, not another scan.
  const [tot] = per.length <= 1 ? [per[0] ?? { scenarios: 0, samples: 0 }] : await ctx.q(`SELECT CAST(count(DISTINCT scenario_id) AS BIGINT) AS scenarios, CAST(count(*) AS BIGINT) AS samples FROM episodes`);
  const judges = [...new Set(runs.flatMap((r) => r.judges))].sort(byText);
  const epochs = [...new Set(runs.map((r) => r.epochs ?? r.epochs_observed))].sort((a, b) => a - b);
  const suites = [...new Set(runs.map((r) => r.suite))].sort(byText);
  const several = suites.length > 1;
  const tasks = several
    ? (await ctx.q(`SELECT r.suite AS task, CAST(count(DISTINCT e.scenario_id) AS BIGINT) AS items FROM episodes e JOIN runs r USING (run_id) GROUP BY ALL ORDER BY task`)).map((r) => ({ task: String(r.task), items: Number(r.items) }))
    : undefined;
  return {
    runs,
    totals: {
      runs: runs.length,
      subjects: several ? new Set(runs.flatMap((r) => r.subjects)).size : ctx.subjects.length,
      judges: judges.length,
      scenarios: several ? tasks!.reduce((a, t) => a + t.items, 0) : Number(tot.scenarios),
      samples: Number(tot.samples),
      epochs,
      ...(tasks ? { tasks } : {}),
    },
    subjects: ctx.subjects,
    judges,
    hashes,
    gate: await structuralGate(ctx, runs),
  };
}

/**
 * Each run's verdict of the gate's `unique_episodes` check (true: no episode id twice), for the
 * sections that need it (the judges' per-sample pivots) instead of counting it again; empty
 * without a gate (a suite without one, or no summary).
 */
export function uniqueEpisodeRuns(summary: Pick<SummaryResult, 'gate'> | undefined): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const c of summary?.gate.checks ?? []) {
    if (c.run !== null && (c.check === 'unique_episodes' || c.check === `unique_episodes (${c.run})`)) out.set(c.run, c.passed);
  }
  return out;
}

async function structuralGate(ctx: ReportContext, runs: RunSummaryRow[]): Promise<SummaryResult['gate']> {
  // The project's publication gate over the reported runs (src/store/validate-run.ts), with the
  // suite's defaults decided there: the same verdict as `standoff validate` on these runs.
  // Its own DuckDB instance gets the report's memory limit (without one, DuckDB takes up to 80% of RAM: 6 GB at 1e7 episodes).
  const v = await validateStore(ctx.storeDir, { runIds: runs.map((r) => r.run_id), allowJudgeErrors: ctx.allowJudgeErrors, allowTruncated: ctx.allowTruncated, allowMissing: ctx.allowMissing, memoryLimit: REPORT_MEMORY_LIMIT });
  const several = runs.length > 1;
  const checks: GateCheck[] = [];
  for (const r of v.runs) {
    for (const c of r.checks) checks.push({ check: several ? `${c.name} (${r.runId})` : c.name, run: r.runId, passed: c.ok, detail: c.detail, failures: c.ok ? [] : [c.detail] });
  }
  for (const c of v.across) checks.push({ check: c.name, run: null, passed: c.ok, detail: c.detail, failures: c.failures });
  return { passed: v.ok, checks, judge_verdicts: v.verdicts };
}

function promptVariant(config: Record<string, unknown> | null): string | null {
  if (typeof config?.prompt === 'string') return config.prompt;
  return config?.protocol_version === 'standoff-protocol/1' ? 'instructed' : null;
}

function temperatureText(r: RunSummaryRow): string {
  const t = Object.entries(r.subject_temperatures);
  const vals = [...new Set(t.map(([, v]) => v))];
  if (vals.length === 1) return String(vals[0]);
  if (vals.length > 1) return t.map(([m, v]) => `${m} ${v}`).join(', ');
  return r.temperature === null ? 'not recorded' : String(r.temperature);
}

/**
 * The gate at the top of the report. Passed: one line. Failed: a list grouped by run, failed runs
 * (and within a run, failed checks) first; a passing run's checks are one line.
 */
export function renderGate(s: SummaryResult): string {
  const g = s.gate;
  const runs = [...new Set(g.checks.map((c) => c.run).filter((r): r is string => r !== null))];
  const across = g.checks.filter((c) => c.run === null);
  const over = runs.length > 1 ? ` over ${runs.length} runs` : '';
  if (g.passed) return `> **Structural gate: PASSED** (${g.checks.length}/${g.checks.length} checks${over}; each check in the run summary below).\n`;
  const failed = g.checks.filter((c) => !c.passed);
  const lines = [`> **Structural gate: FAILED** (${failed.length} of ${g.checks.length} checks failed${over}). Treat the numbers below as diagnostics, not results.`, '>'];
  const item = (c: GateCheck, indent: string) => {
    lines.push(`>${indent} - ${c.passed ? 'pass' : '**FAIL**'}: ${cell(c.run === null || runs.length <= 1 ? c.check : c.check.replace(` (${c.run})`, ''))} — ${cell(c.detail)}`);
    const extra = c.failures.filter((f) => f !== c.detail);
    for (const f of extra.slice(0, 20)) lines.push(`>${indent}   - ${cell(f)}`);
    if (extra.length > 20) lines.push(`>${indent}   - … and ${extra.length - 20} more (results.json)`);
  };
  const failedFirst = (a: GateCheck, b: GateCheck) => Number(a.passed) - Number(b.passed);
  if (runs.length <= 1) {
    for (const c of [...g.checks].sort(failedFirst)) item(c, '');
    return lines.join('\n') + '\n';
  }
  // Failed runs (each with its failed checks), failed checks across runs, then what passed.
  const byRun = runs.map((run) => ({ run, checks: g.checks.filter((c) => c.run === run) }));
  for (const { run, checks } of byRun.filter((x) => x.checks.some((c) => !c.passed))) {
    const bad = checks.filter((c) => !c.passed);
    lines.push(`> - run ${code(run)}: **FAILED** ${bad.length} of ${checks.length} checks`);
    for (const c of bad) item(c, '  ');
    lines.push(`>   - passed: ${checks.filter((c) => c.passed).map((c) => cell(c.check.replace(` (${run})`, ''))).join(', ') || 'none'}`);
  }
  for (const c of across.filter((x) => !x.passed)) item(c, '');
  for (const { run, checks } of byRun.filter((x) => x.checks.every((c) => c.passed))) lines.push(`> - run ${code(run)}: passed (${checks.length}/${checks.length} checks)`);
  for (const c of across.filter((x) => x.passed)) item(c, '');
  return lines.join('\n') + '\n';
}

/**
 * A banner under the gate when any subject is simulated (sim: models, synthetic runs): such
 * numbers show how the pipeline works, not how any model behaves.
 */
export function renderSimulatedBanner(s: Pick<SummaryResult, 'runs'>): string {
  const sim = s.runs.filter((r) => r.simulated);
  if (sim.length === 0) return '';
  const subjects = [...new Set(sim.flatMap((r) => r.subjects))].sort(byText);
  return `> **Simulated subjects**: ${subjects.map(cell).join(', ')} (${sim.length === s.runs.length ? 'every run' : `runs ${sim.map((r) => code(r.run_id)).join(', ')}`}) are simulated, not real model output: these numbers show the method, not any model.\n`;
}

/** The root of the run's state manifest (runner/manifest.ts), as recorded in its config. */
function statesRoot(config: unknown): string | null {
  const m = config !== null && typeof config === 'object' ? (config as Record<string, unknown>).state_manifest : undefined;
  const root = m !== null && typeof m === 'object' ? (m as Record<string, unknown>).root : undefined;
  return typeof root === 'string' && /^[0-9a-f]{64}$/.test(root) ? root : null;
}

export function renderSummary(s: SummaryResult, opts: { seed: number; resamples: number; level: number }): string {
  const out: string[] = ['## 1. Run summary\n'];
  const t = s.totals;
  const items = t.tasks
    ? `${t.tasks.length} tasks (items per task: ${t.tasks.map((x) => `${cell(x.task)} ${fmtCount(x.items)}`).join(', ')}), ${t.epochs.join('/')} epoch${t.epochs.length === 1 && t.epochs[0] === 1 ? '' : 's'} per item`
    : `${fmtCount(t.scenarios)} scenario${t.scenarios === 1 ? '' : 's'}, ${t.epochs.join('/')} epoch${t.epochs.length === 1 && t.epochs[0] === 1 ? '' : 's'} per scenario`;
  out.push(`${t.runs} run${t.runs === 1 ? '' : 's'}, ${t.subjects} subject${t.subjects === 1 ? '' : 's'}, ${t.judges} judge${t.judges === 1 ? '' : 's'}, ${items}, ${fmtCountOf(t.samples, 'sample')} in all.\n`);
  // A column no run of the store records (temperature, prompt, seed of a CSV) is left out.
  const cols: { head: string; align: 'l' | 'r'; cell: (r: RunSummaryRow) => string; applies: boolean }[] = [
    { head: 'Run', align: 'l', cell: (r) => code(r.run_id), applies: true },
    { head: 'Suite', align: 'l', cell: (r) => cell(r.suite), applies: true },
    { head: 'Source', align: 'l', cell: (r) => cell(r.source), applies: true },
    { head: 'Status', align: 'l', cell: (r) => cell(r.status), applies: true },
    { head: 'Subjects', align: 'l', cell: (r) => cell(r.subjects.join(', ')), applies: true },
    { head: 'Judges', align: 'l', cell: (r) => cell(r.judges.join(', ') || 'none'), applies: true },
    { head: 'Scenarios', align: 'r', cell: (r) => fmtCount(r.scenarios), applies: true },
    { head: 'Epochs', align: 'r', cell: (r) => String(r.epochs ?? r.epochs_observed), applies: true },
    { head: 'Temperature', align: 'l', cell: (r) => cell(temperatureText(r)), applies: s.runs.some((r) => r.temperature !== null || Object.keys(r.subject_temperatures).length > 0) },
    { head: 'Prompt', align: 'l', cell: (r) => cell(r.prompt ?? 'not recorded'), applies: s.runs.some((r) => r.prompt !== null) },
    { head: 'Run seed', align: 'r', cell: (r) => (r.seed === null ? '—' : String(r.seed)), applies: s.runs.some((r) => r.seed !== null) },
    { head: 'Samples', align: 'r', cell: (r) => fmtCount(r.samples), applies: true },
    { head: 'SHA-256 (Parquet)', align: 'l', cell: (r) => code(r.sha256.slice(0, 16)), applies: true },
    { head: 'States root (SHA-256)', align: 'l', cell: (r) => (r.states_root ? code(r.states_root.slice(0, 16)) : 'not recorded'), applies: s.runs.some((r) => r.source === 'standoff' || r.states_root !== null) },
  ];
  const shown = cols.filter((c) => c.applies);
  out.push(table(shown.map((c) => c.head), s.runs.map((r) => shown.map((c) => c.cell(r))), shown.map((c) => c.align)));
  const prompts = s.runs.filter((r) => r.prompt !== null);
  if (prompts.length) {
    out.push(
      `Prompt: ${[...new Set(prompts.map((r) => r.prompt))].map((p) => (p === 'neutral' ? '*neutral* (the agent sees the situation, the policy and the tools; nothing tells it to read the log)' : p === 'instructed' ? '*instructed* (the agent is told to fetch the system log first)' : `*${cell(p)}*`)).join('; ')}. ` +
        `Evidence gathering measures whether an agent checks before it commits, which only the neutral prompt leaves to the agent.\n`,
    );
  }
  const notes = s.runs.filter((r) => r.notes);
  if (notes.length) out.push(notes.map((r) => `Notes for ${code(r.run_id)}: ${cell(r.notes)}`).join('\n\n') + '\n');
  out.push(
    `Report statistics: ${Math.round(opts.level * 100)}% intervals; resampling with seed ${opts.seed} and ${fmtCount(opts.resamples)} resamples. ` +
      `Full SHA-256 hashes of every input file are in \`results.json\` (\`inputs\`).\n`,
  );
  out.push('### Structural gate\n');
  out.push(
    table(
      ['Check', 'Result', 'Detail'],
      s.gate.checks.map((c) => {
        const extra = c.failures.filter((f) => f !== c.detail);
        return [c.check, c.passed ? 'pass' : '**FAIL**', cell([c.detail, ...extra.slice(0, 10)].join('; ') + (extra.length > 10 ? `; … ${extra.length - 10} more` : ''))];
      }),
    ),
  );
  return out.join('\n');
}
