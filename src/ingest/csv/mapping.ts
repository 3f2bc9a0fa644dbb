/**
 * The CSV mapping: which table a CSV feeds, which source column fills which schema column, value
 * maps, constants and (for episode CSVs) score columns. A mapping comes from a JSON file
 * (`--map`, validated by `mappingSchema`) or is detected from the header (`detectMapping`).
 * `docs/ingest-csv.md` documents the format, the recognised column names and the defaults.
 */
import { z } from 'zod';
import { SCORER_NAMES, TABLES, sqlColumns } from '../../schema/tables.ts';

/** Tables a CSV can be ingested into. */
export const MAPPED_TABLES = ['episodes', 'judgments', 'probe_answers', 'aggregates'] as const;
export type MappedTable = (typeof MAPPED_TABLES)[number];

const cellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const scoreSpecSchema = z.strictObject({
  scorer: z.string().min(1).describe('Scorer name written to `scores.scorer`.'),
  column: z.string().min(1).describe('Source column holding the score.'),
  values: z
    .record(z.string(), z.number().nullable())
    .optional()
    .describe('Cell text -> score value; null means NOANSWER. Checked before the built-in tokens.'),
  answer: z.string().min(1).optional().describe('Source column for `scores.answer`.'),
  explanation: z.string().min(1).optional().describe('Source column for `scores.explanation`.'),
});

export const mappingSchema = z.strictObject({
  table: z.enum(MAPPED_TABLES).describe('Target table.'),
  columns: z.record(z.string(), z.string().min(1)).default({}).describe('Schema column -> source column (CSV header name).'),
  values: z
    .record(z.string(), z.record(z.string(), cellValue))
    .default({})
    .describe('Schema column -> { cell text -> value }, checked before the built-in conversion.'),
  constants: z.record(z.string(), cellValue).default({}).describe('Schema column -> the same value for every row.'),
  scores: z.array(scoreSpecSchema).default([]).describe('Score columns (episodes only): one `scores` row per episode and entry.'),
  suite: z.string().min(1).optional().describe('`runs.suite` (default: the first file name without extension).'),
  notes: z.string().optional().describe('Appended to `runs.notes`.'),
});

/** A validated mapping (defaults filled in). */
export type Mapping = z.infer<typeof mappingSchema>;
/** A mapping as written in a JSON file (optional members may be omitted). */
export type MappingInput = z.input<typeof mappingSchema>;
export type ScoreSpec = z.infer<typeof scoreSpecSchema>;

export type FieldKind = 'text' | 'json' | 'enum' | 'int' | 'bigint' | 'num' | 'bool' | 'ts';

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  nullable: boolean;
  /** Allowed values of an enum column. */
  options?: readonly string[];
  /** Not stored in the table: only used to build a key (judgments: episode_id). */
  keyOnly?: boolean;
}

const SQL_KIND: Record<string, FieldKind> = {
  VARCHAR: 'text',
  INTEGER: 'int',
  BIGINT: 'bigint',
  DOUBLE: 'num',
  BOOLEAN: 'bool',
  TIMESTAMP: 'ts',
};

/** Columns a mapping may fill, derived from the trace schema (plus key-only columns). */
export function tableFields(table: MappedTable): FieldSpec[] {
  const shape = TABLES[table].shape as Record<string, z.ZodType>;
  const out: FieldSpec[] = [];
  for (const c of sqlColumns(table)) {
    if (c.name === 'run_id') continue;
    if (table === 'aggregates' && c.name === 'source_row') continue; // always the CSV line
    let kind: FieldKind = c.json ? 'json' : SQL_KIND[c.type]!;
    if (!kind) throw new Error(`no CSV conversion for ${table}.${c.name} (${c.type})`);
    let options: readonly string[] | undefined;
    let s = shape[c.name] as unknown as { _zod: { def: { type: string; innerType?: unknown } }; options?: string[] };
    if (s._zod.def.type === 'nullable') s = s._zod.def.innerType as typeof s;
    if (s._zod.def.type === 'enum') {
      kind = 'enum';
      options = s.options;
    }
    out.push({ name: c.name, kind, nullable: c.nullable, options });
  }
  if (table === 'judgments') {
    out.push(
      { name: 'subject_model', kind: 'text', nullable: false, keyOnly: true },
      { name: 'scenario_id', kind: 'text', nullable: false, keyOnly: true },
      { name: 'epoch', kind: 'int', nullable: false, keyOnly: true },
    );
  }
  return out;
}

const FIELDS: Record<MappedTable, FieldSpec[]> = {
  episodes: tableFields('episodes'),
  judgments: tableFields('judgments'),
  probe_answers: tableFields('probe_answers'),
  aggregates: tableFields('aggregates'),
};

export const fieldsOf = (table: MappedTable): FieldSpec[] => FIELDS[table];

/**
 * Schema columns a table needs from the CSV (a source column or a constant): everything else has
 * a default or is derived (see `DEFAULTS`). Judgments need `episode_id` or `subject_model` +
 * `scenario_id`, and `verdict` or `value` (checked separately).
 */
export const REQUIRED: Record<MappedTable, string[]> = {
  episodes: ['subject_model', 'scenario_id'],
  judgments: ['judge_model'],
  probe_answers: ['subject_model', 'scenario_id', 'probe_id', 'expected'],
  aggregates: ['subject_model', 'metric', 'successes', 'trials'],
};

/** Defaults for unmapped columns, as documented (also recorded in `runs.notes` when used). */
export const DEFAULTS: Record<MappedTable, Record<string, string>> = {
  episodes: {
    episode_id: '<subject_model>/<scenario_id>/<epoch>',
    epoch: '1',
    target: 'null (not measured)',
    status: 'valid',
    gathered_evidence: 'null (not measured)',
    log_reads: 'null (not measured)',
    turns: 'null (not measured)',
  },
  judgments: {
    episode_id: '<subject_model>/<scenario_id>/<epoch> (epoch 1 when unmapped)',
    scorer: 'reasoning_action_alignment',
    verdict: 'from value: 1 ALIGNED, 0 MISALIGNED, null ERROR',
    value: 'from verdict: ALIGNED 1, MISALIGNED 0, ERROR null (or C/I/N and the other score tokens)',
    excluded_self: 'false',
  },
  probe_answers: {
    epoch: '1',
    state_id: '<scenario_id>/<epoch>',
    question: '"" (unknown)',
    correct: 'answer equals expected (false when answer is empty)',
  },
  aggregates: {},
};

/** Normalises a header name for auto-detection: trimmed, lower-case, spaces/dashes as `_`. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s-]+/g, '_');
}

const SUBJECT = ['subject_model', 'subject', 'model'];
const SCENARIO = ['scenario_id', 'scenario', 'sample_id', 'id'];

/** Recognised header names per schema column, in priority order (compared after `normalizeName`). */
export const ALIASES: Record<MappedTable, Record<string, string[]>> = {
  episodes: {
    episode_id: ['episode_id', 'episode'],
    subject_model: SUBJECT,
    subject_family: ['subject_family', 'model_family', 'family'],
    scenario_id: SCENARIO,
    domain: ['domain'],
    decision_type: ['decision_type'],
    variant: ['variant'],
    epoch: ['epoch'],
    target: ['target'],
    status: ['status'],
    invalid_reason: ['invalid_reason'],
    decision_tool: ['decision_tool', 'decision'],
    decision_args: ['decision_args'],
    gathered_evidence: ['gathered_evidence'],
    log_reads: ['log_reads'],
    turns: ['turns'],
    input_tokens: ['input_tokens'],
    output_tokens: ['output_tokens'],
    latency_ms: ['latency_ms'],
    started_at: ['started_at'],
    error: ['error'],
  },
  judgments: {
    episode_id: ['episode_id', 'episode'],
    subject_model: SUBJECT,
    scenario_id: SCENARIO,
    epoch: ['epoch'],
    scorer: ['scorer'],
    judge_model: ['judge_model', 'judge'],
    judge_family: ['judge_family'],
    verdict: ['verdict', 'grade'],
    value: ['value', 'score'],
    excluded_self: ['excluded_self'],
    raw: ['raw', 'raw_reply', 'reply'],
  },
  probe_answers: {
    state_id: ['state_id', 'state'],
    subject_model: SUBJECT,
    scenario_id: SCENARIO,
    epoch: ['epoch'],
    probe_id: ['probe_id', 'probe'],
    question: ['question'],
    expected: ['expected', 'expected_answer'],
    answer: ['answer'],
    correct: ['correct'],
  },
  aggregates: {
    subject_model: SUBJECT,
    metric: ['metric'],
    successes: ['successes'],
    trials: ['trials'],
  },
};

/** Scorers whose column name alone makes an episode-CSV column a score column. */
export const KNOWN_SCORERS = SCORER_NAMES;
/** Generic score columns (the first one present is used; its name becomes the scorer name). */
export const GENERIC_SCORE_COLUMNS = ['score', 'correct', 'value'] as const;

export interface Detection {
  mapping: Mapping;
  /** Header columns the mapping does not use. */
  ignored: string[];
}

function findColumn(index: Map<string, string>, aliases: readonly string[], used: Set<string>): string | undefined {
  for (const a of aliases) {
    const col = index.get(a);
    if (col !== undefined && !used.has(col)) return col;
  }
  return undefined;
}

/** Which table a header looks like: aggregate, probe answers, judgments, else episodes. */
export function detectTable(header: readonly string[]): MappedTable {
  const names = new Set(header.map(normalizeName));
  const has = (aliases: readonly string[]) => aliases.some((a) => names.has(a));
  if (has(['metric']) && has(['successes']) && has(['trials'])) return 'aggregates';
  if (has(ALIASES.probe_answers.probe_id!) && has(ALIASES.probe_answers.expected!)) return 'probe_answers';
  if (has(ALIASES.judgments.judge_model!)) return 'judgments';
  return 'episodes';
}

/**
 * Builds a mapping from well-known header names (see `ALIASES`, `KNOWN_SCORERS`,
 * `GENERIC_SCORE_COLUMNS`). Required columns that are missing are reported later, by `resolveMapping`.
 */
export function detectMapping(header: readonly string[]): Detection {
  const table = detectTable(header);
  const index = new Map<string, string>();
  for (const h of header) {
    const n = normalizeName(h);
    if (!index.has(n)) index.set(n, h);
  }
  const used = new Set<string>();
  const columns: Record<string, string> = {};
  for (const [field, aliases] of Object.entries(ALIASES[table])) {
    const col = findColumn(index, aliases, used);
    if (col !== undefined) {
      columns[field] = col;
      used.add(col);
    }
  }
  const scores: ScoreSpec[] = [];
  if (table === 'episodes') {
    for (const scorer of KNOWN_SCORERS) {
      const col = index.get(scorer);
      if (col !== undefined) {
        scores.push({ scorer, column: col });
        used.add(col);
      }
    }
    const generic = findColumn(index, GENERIC_SCORE_COLUMNS, used);
    if (generic !== undefined) {
      const spec: ScoreSpec = { scorer: normalizeName(generic), column: generic };
      used.add(generic);
      const answer = findColumn(index, ['answer'], used);
      if (answer !== undefined) {
        spec.answer = answer;
        used.add(answer);
      }
      const explanation = findColumn(index, ['explanation'], used);
      if (explanation !== undefined) {
        spec.explanation = explanation;
        used.add(explanation);
      }
      scores.push(spec);
    }
  }
  const mapping: Mapping = { table, columns, values: {}, constants: {}, scores };
  return { mapping, ignored: header.filter((h) => !used.has(h)) };
}

/** The mapping as compact JSON-ready data (empty members dropped), for printing and `runs.config`. */
export function compactMapping(m: Mapping): Record<string, unknown> {
  const out: Record<string, unknown> = { table: m.table, columns: m.columns };
  if (Object.keys(m.values).length > 0) out.values = m.values;
  if (Object.keys(m.constants).length > 0) out.constants = m.constants;
  if (m.scores.length > 0) out.scores = m.scores;
  if (m.suite !== undefined) out.suite = m.suite;
  if (m.notes !== undefined) out.notes = m.notes;
  return out;
}

/**
 * Checks a parsed mapping's column names against the schema (the zod schema has checked its
 * shape). Returns problems as `path: message` strings; empty when the mapping is usable.
 */
export function checkMappingColumns(m: Mapping): string[] {
  const problems: string[] = [];
  const fields = new Map(fieldsOf(m.table).map((f) => [f.name, f]));
  const known = () => [...fields.keys()].join(', ');
  for (const section of ['columns', 'values', 'constants'] as const) {
    for (const name of Object.keys(m[section])) {
      if (!fields.has(name)) problems.push(`${section}.${name}: "${name}" is not a column ${m.table} can fill (columns: ${known()})`);
    }
  }
  for (const name of Object.keys(m.columns)) {
    if (Object.hasOwn(m.constants, name)) problems.push(`constants.${name}: "${name}" is also mapped in columns; use one of them`);
  }
  for (const name of Object.keys(m.values)) {
    if (!Object.hasOwn(m.columns, name)) problems.push(`values.${name}: "${name}" has a value map but no source column in columns`);
  }
  if (m.scores.length > 0 && m.table !== 'episodes') problems.push(`scores: only an episodes mapping can have scores (table is ${m.table})`);
  const scorers = new Set<string>();
  m.scores.forEach((s, i) => {
    if (scorers.has(s.scorer)) problems.push(`scores.${i}.scorer: scorer "${s.scorer}" appears twice`);
    scorers.add(s.scorer);
  });
  return problems;
}
