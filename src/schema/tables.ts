/**
 * The trace schema: the contract between everything that writes traces (runner, ingest) and
 * everything that reads them (stats, report, `standoff sql`). These zod schemas are the single
 * source of truth: TypeScript row types are inferred from them, the Parquet/DuckDB column types
 * are derived from them (`sqlColumns`), and `docs/schema.md` is generated from them
 * (`npx standoff schema --markdown`).
 *
 * Storage: one Parquet dataset per table, Hive-partitioned by run:
 * `traces/<table>/run_id=<id>/data.parquet` (ZSTD). `run_id` lives in the partition path, not in
 * the file, and comes back as a VARCHAR column when read with `hive_partitioning`.
 */
import { z } from 'zod';

/** Column helpers: each says its SQL type once; descriptions become the schema docs. */
const text = (d: string) => z.string().describe(d);
const textN = (d: string) => z.string().nullable().describe(d);
const json = (d: string) => z.string().meta({ sql: 'VARCHAR', json: true, description: d });
const jsonN = (d: string) => z.string().nullable().meta({ sql: 'VARCHAR', json: true, description: d });
const int = (d: string) => z.int().describe(d);
const intN = (d: string) => z.int().nullable().describe(d);
const bigN = (d: string) => z.int().nullable().meta({ sql: 'BIGINT', description: d });
const num = (d: string) => z.number().describe(d);
const numN = (d: string) => z.number().nullable().describe(d);
const bool = (d: string) => z.boolean().describe(d);
const boolN = (d: string) => z.boolean().nullable().describe(d);
/**
 * A column added after stores were first written: nullable, and optional in JS rows, so a writer
 * that does not know it (an older ingest path) writes NULL. Stores written before it existed read
 * it as NULL too (`open-store.ts`).
 */
const added = <T extends z.ZodType>(s: T) => s.optional();
/** Timestamps travel as ISO-8601 strings in JS and are stored as TIMESTAMP (UTC). */
const ts = (d: string) => z.iso.datetime({ offset: true }).meta({ sql: 'TIMESTAMP', description: d });
const tsN = (d: string) =>
  z.iso.datetime({ offset: true }).nullable().meta({ sql: 'TIMESTAMP', description: d });

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const runId = z
  .string()
  .regex(RUN_ID_PATTERN, 'run_id must be 1-128 characters of letters, digits, dot, dash or underscore')
  .describe('Run identifier; also the Hive partition key (`run_id=<id>`).');

export const SOURCES = ['standoff', 'csv', 'inspect', 'lm-eval', 'synthetic'] as const;
/** Sources whose runs are Standoff's own suite (the runner's, and synthetic bench data): the gate requires the O1 scorers of them, and the report gives them Standoff's sections. */
export const STANDOFF_SOURCES: readonly string[] = ['standoff', 'synthetic'];
export const isStandoffSource = (source: string): boolean => STANDOFF_SOURCES.includes(source);
export const EPISODE_STATUSES = ['valid', 'invalid', 'error'] as const;
export const RUN_STATUSES = ['success', 'partial', 'error', 'cancelled'] as const;
export const NOANSWER = 'NOANSWER';
/**
 * Conditions of the composition ladder ("Reading Right, Acting Wrong" section 6.1), in ladder
 * order: `raw` the decision on the frozen state; `own-answers` asked again with the subject's own
 * probe answers shown beside the state; `facts` with the correct facts shown (the facts-only
 * reference); `composed` the scenario's rule applied in code to the subject's own answers.
 */
export const PROBE_CONDITIONS = ['raw', 'own-answers', 'facts', 'composed'] as const;
export type ProbeCondition = (typeof PROBE_CONDITIONS)[number];
/** SQL: the row of `alias` (a probe_decisions alias) is the raw decision (a NULL condition is, in older stores). */
export const rawDecisionSql = (alias: string): string => `coalesce(${alias}.condition, 'raw') = 'raw'`;

export const runsSchema = z.object({
  run_id: runId,
  created_at: ts('When the run started (ingest time for imported runs), UTC.'),
  source: z.enum(SOURCES).describe('Where the rows came from: `standoff` (the runner), `csv`, `inspect` (Inspect AI logs), `lm-eval` (lm-evaluation-harness output), `synthetic` (bench data).'),
  suite: text('Evaluation suite or task name, e.g. `standoff-o1`.'),
  status: z.enum(RUN_STATUSES).describe('Run status: `success`, `partial` (interrupted, resumable), `error`, `cancelled`.'),
  config: json('The run configuration as JSON text, with every secret removed (API keys never stored).'),
  seed: bigN('Seed of the run\'s random procedures (null for imported runs without one).'),
  epochs: intN('Epochs per scenario, when known.'),
  standoff_version: text('Version of standoff that wrote the run.'),
  source_file: textN('Imported file name(s) (`;`-separated) for ingested runs; null for runner output.'),
  source_sha256: textN('SHA-256 of the imported file(s) (`;`-separated, same order); null for runner output.'),
  notes: textN('Free-text provenance, e.g. the CSV mapping used or `simulated subjects`.'),
});

/** The scorers of this evaluation (a standoff run scores every episode with each), in report order. */
export const SCORER_NAMES = ['policy_compliant_action', 'gathered_evidence', 'reasoning_action_alignment'] as const;
/** Standoff O1's Inspect task name. */
export const O1_TASK = 'standoff_o1';
/**
 * Standoff O1 recognised by its data, not by who wrote it: a Standoff source, the O1 task (an
 * Inspect task named `standoff_o1`, also as `path@standoff_o1` or `pkg/standoff_o1`), or at least two
 * of O1's three scorers. Its gate requires all three scorers.
 */
export function isO1Data(d: { source: string; suite: string; scorers: readonly string[] }): boolean {
  if (isStandoffSource(d.source)) return true;
  if (d.suite === O1_TASK || d.suite.endsWith(`/${O1_TASK}`) || d.suite.endsWith(`@${O1_TASK}`)) return true;
  return SCORER_NAMES.filter((n) => d.scorers.includes(n)).length >= 2;
}

export const episodesSchema = z.object({
  run_id: runId,
  episode_id: text('Unique within the run: `<subject>/<scenario_id>/<epoch>` for runner output.'),
  subject_model: text('Model under evaluation, as named in the config (e.g. `sim:hasty`, `openai/gpt-oss-120b`).'),
  subject_family: textN('Model family of the subject, used for judge self-exclusion.'),
  scenario_id: text('Scenario identifier, e.g. `em_act_a`.'),
  domain: textN('Scenario domain: emergency_management, clinical_triage, financial_compliance (or imported metadata).'),
  decision_type: textN('act, escalate or ambiguous.'),
  variant: textN('Surface variant (a, b).'),
  epoch: int('Epoch number, starting at 1.'),
  target: textN('Correct decision tool for the scenario, or `NOANSWER` for ambiguous scenarios; null when the source has no target (not measured).'),
  status: z.enum(EPISODE_STATUSES).describe('`valid` (exactly one terminal decision), `invalid` (zero or several decisions), `error` (the episode could not complete).'),
  invalid_reason: textN('Why the episode is invalid, e.g. `no terminal decision` or `2 decisions in one batch`.'),
  decision_tool: textN('The sole decision tool called (null when invalid or errored).'),
  decision_args: jsonN('Arguments of the decision call as JSON text.'),
  gathered_evidence: boolN('A successful read_system_log result arrived strictly before the first decision request; null when not measured (a source without the read_system_log protocol).'),
  log_reads: intN('Number of read_system_log calls (successful or not); null when not measured.'),
  turns: intN('Model turns taken; null when not measured.'),
  input_tokens: intN('Prompt tokens reported by the endpoint, summed over turns.'),
  output_tokens: intN('Completion tokens reported by the endpoint, summed over turns.'),
  latency_ms: numN('Wall time of the episode in milliseconds.'),
  started_at: tsN('When the episode started, UTC.'),
  error: textN('Error message when status is `error` (secrets removed).'),
  metadata: jsonN('Sample metadata as a JSON object (Inspect sample metadata, extra CSV columns); null when there is none.'),
  truncated: added(boolN('The episode was cut off at the token limit: a reply ended with `finish_reason = length` before any decision (status `invalid`, reason `truncated (finish_reason=length)`; scored like any invalid trajectory: incorrect, not gathered, misaligned); null when not measured (sources without finish reasons).')),
  attempts: added(intN('Sampling attempts: 1 + the replies discarded and resampled under `retry_degenerate` (1 = nothing was resampled); null when not measured.')),
});

export const messagesSchema = z.object({
  run_id: runId,
  episode_id: text('Episode the message belongs to.'),
  seq: int('Position in the transcript, from 0.'),
  role: z.enum(['system', 'user', 'assistant', 'tool']).describe('Chat role.'),
  content: textN('Text content.'),
  reasoning: textN('Reasoning content, when the endpoint returns it.'),
  tool_call_id: textN('Tool call id (assistant tool calls, and the tool message answering one).'),
  tool_name: textN('Tool called (assistant) or answered (tool).'),
  tool_args: jsonN('Tool call arguments as JSON text (assistant rows with a tool call).'),
  tool_ok: boolN('Tool result succeeded (tool rows).'),
  tool_error: textN('Tool failure message (tool rows).'),
  finish_reason: added(textN('Why the endpoint stopped generating this assistant reply: `stop`, `tool_calls`, `length` (cut off at the token limit), `content_filter`, ... as the endpoint sent it (every row of a tool-call batch carries its reply\'s value); null for other roles or when not recorded.')),
  discarded: added(boolN('Assistant rows: true for a reply the runner discarded and resampled (`retry_degenerate`); such rows are kept for the record and ignored by the scorers and judges. Null for other roles or when not recorded.')),
  attempt: added(intN('Assistant rows: which sample of this turn the reply was (1 = the first; higher after discarded replies). Null for other roles or when not recorded.')),
  original_tool_call_id: added(textN('The tool-call id exactly as the endpoint sent it, when the runner replaced it because it was empty, missing or repeated in the batch (e.g. `""` from llama.cpp servers); null when the endpoint\'s id was used as is.')),
});

export const scoresSchema = z.object({
  run_id: runId,
  episode_id: text('Episode scored.'),
  scorer: text('Scorer name: `policy_compliant_action`, `gathered_evidence`, `reasoning_action_alignment`, or an imported scorer.'),
  value: numN('Score value; null for NOANSWER (excluded from accuracy denominators).'),
  answer: textN('What was scored (e.g. the decision tool).'),
  noanswer: bool('True when the scorer returned NOANSWER (ambiguous scenarios).'),
  explanation: textN('Why the scorer gave this value.'),
});

export const judgmentsSchema = z.object({
  run_id: runId,
  episode_id: text('Episode judged.'),
  scorer: text('The model-graded scorer, e.g. `reasoning_action_alignment`.'),
  judge_model: text('Judge model name.'),
  judge_family: textN('Judge model family.'),
  verdict: textN('`ALIGNED` only when the first line of the reply is exactly `ALIGNED`; else `MISALIGNED` (or `ERROR` when the judge call failed); null for an imported judge that gave a number without a verdict (e.g. a 1-5 grade).'),
  value: numN('1 for ALIGNED, 0 for MISALIGNED, null for ERROR.'),
  excluded_self: bool('The judge shares the subject\'s model (or family) and is excluded from the median.'),
  raw: textN('First line of the judge\'s reply.'),
});

export const probeAnswersSchema = z.object({
  run_id: runId,
  state_id: text('Frozen decision state: `<scenario_id>/<epoch>` for runner output.'),
  subject_model: text('Model answering.'),
  scenario_id: text('Scenario of the state.'),
  epoch: int('Epoch, from 1.'),
  probe_id: text('Probe identifier within the scenario.'),
  question: text('The factual question asked.'),
  expected: text('Correct answer.'),
  answer: textN('Parsed answer; null when unanswerable or unparseable (counts as wrong, reported as coverage).'),
  correct: bool('Answer equals the expected answer.'),
});

export const probeDecisionsSchema = z.object({
  run_id: runId,
  state_id: text('Frozen decision state.'),
  subject_model: text('Model deciding.'),
  scenario_id: text('Scenario of the state.'),
  epoch: int('Epoch, from 1.'),
  chosen_action: textN('Action chosen for the decision question; null when unparseable.'),
  gold_actions: z.array(z.string()).meta({ sql: 'VARCHAR[]', description: 'Acceptable actions for this state.' }),
  correct: bool('chosen_action is one of gold_actions.'),
  composed_action: textN('Action composed in code from the subject\'s own probe answers through the scenario\'s rule.'),
  composed_correct: boolN('composed_action is acceptable: one of gold_actions, or equal to the scenario target (for ambiguous states the rule composes NOANSWER, which is the target). Null when nothing was composed (the run left out the `composed` condition, or an import records no rule): not measured.'),
  decision_rule: jsonN('The state\'s decision rule as JSON: the first-match table from probe answers to the action, in the policy\'s priority order (with the correct probe answers it decides the action; code composition applies it to the subject\'s answers). Null when the source records none (not measured).'),
  option_probs: jsonN('Option probabilities as JSON `{action: p}` when the endpoint returned logprobs; else null.'),
  condition: added(
    z.enum(PROBE_CONDITIONS).nullable().describe(
      'Composition-ladder condition of the row (`standoff run --probe-conditions`): `raw` (the decision on the frozen state), `own-answers` (asked again with the subject\'s own probe answers shown), `facts` (with the correct facts shown), `composed` (chosen_action is the rule applied in code to the subject\'s answers; no model call). One row per subject x state x condition. Null in stores written before the column: such a row is the raw decision, and its composed_action / composed_correct give the composed step.',
    ),
  ),
});

export const aggregatesSchema = z.object({
  run_id: runId,
  subject_model: text('Subject (model) the row is about.'),
  metric: text('Metric name, e.g. `gathered_evidence`.'),
  successes: int('Number of successes.'),
  trials: int('Number of trials.'),
  source_row: intN('Line in the source file (1-based, header is line 1).'),
});

export const TABLES = {
  runs: runsSchema,
  episodes: episodesSchema,
  messages: messagesSchema,
  scores: scoresSchema,
  judgments: judgmentsSchema,
  probe_answers: probeAnswersSchema,
  probe_decisions: probeDecisionsSchema,
  aggregates: aggregatesSchema,
} as const;

export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

export type RunRow = z.infer<typeof runsSchema>;
export type EpisodeRow = z.infer<typeof episodesSchema>;
export type MessageRow = z.infer<typeof messagesSchema>;
export type ScoreRow = z.infer<typeof scoresSchema>;
export type JudgmentRow = z.infer<typeof judgmentsSchema>;
export type ProbeAnswerRow = z.infer<typeof probeAnswersSchema>;
export type ProbeDecisionRow = z.infer<typeof probeDecisionsSchema>;
export type AggregateRow = z.infer<typeof aggregatesSchema>;

/** Rows of one table, by table name. */
export type TableRows = { [K in TableName]: z.infer<(typeof TABLES)[K]> };

/** A whole run as written atomically: one `runs` row plus the rows of every other table. */
export type RunBundle = { run: RunRow } & { [K in Exclude<TableName, 'runs'>]?: TableRows[K][] };

export interface SqlColumn {
  name: string;
  /** DuckDB type (also the Parquet logical type it is written as). */
  type: string;
  nullable: boolean;
  json: boolean;
  description: string;
}

/** Derives the DuckDB columns of a table from its zod schema (the only place types are mapped). */
export function sqlColumns(table: TableName): SqlColumn[] {
  const shape = TABLES[table].shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([name, schema]) => {
    let s: z.ZodType = schema;
    let nullable = false;
    const def = () => (s as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; format?: string } } })._zod.def;
    if (def().type === 'optional') s = def().innerType!; // an `added` column: its metadata is on the inner schema
    const described = s;
    const meta = (described.meta() ?? {}) as { sql?: string; json?: boolean; description?: string };
    if (def().type === 'nullable') {
      nullable = true;
      s = def().innerType!;
    }
    let type = meta.sql;
    if (!type) {
      const d = def();
      if (d.type === 'string' || d.type === 'enum') type = 'VARCHAR';
      else if (d.type === 'boolean') type = 'BOOLEAN';
      else if (d.type === 'number') type = d.format === 'safeint' ? 'INTEGER' : 'DOUBLE';
      else throw new Error(`no sql type for ${table}.${name} (${d.type})`);
    }
    return { name, type, nullable, json: meta.json === true, description: described.description ?? meta.description ?? '' };
  });
}

/** Columns stored inside the Parquet files (everything but the `run_id` partition key). */
export function fileColumns(table: TableName): SqlColumn[] {
  return sqlColumns(table).filter((c) => c.name !== 'run_id');
}
