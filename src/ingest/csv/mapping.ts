/**
 * The CSV mapping: which table a CSV feeds, which source column fills which schema column, value
 * maps, constants and (for episode CSVs) score columns, wide judge columns and the columns kept as
 * metadata. A mapping comes from a JSON file (`--map`, validated by `mappingSchema`; a manifest
 * holds one per file), from flags (`MappingFlags`), or is detected (`detectMapping`: from the
 * header, then from the values of the columns no name explains, `completeDetection`).
 * `docs/ingest-csv.md` documents the format, the recognised column names and the defaults.
 */
import { z } from 'zod';
import { SCORER_NAMES, TABLES, sqlColumns } from '../../schema/tables.ts';
import type { ValueKind } from '../../store/csv-values.ts';

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

export const judgesSpecSchema = z.strictObject({
  scorer: z.string().default('').describe('The scorer the judges grade (`judgments.scorer`); may be left to `--judged-scorer`.'),
  columns: z.array(z.string().min(1)).min(1).describe('One source column per judge: each becomes that judge\'s judgments (`judge_model` = the column name).'),
  values: z
    .record(z.string(), z.number().nullable())
    .optional()
    .describe('Cell text -> value; null means no answer. Checked before the built-in tokens.'),
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
  judges: judgesSpecSchema.optional().describe('Wide judge columns (episodes only): one `judgments` row per episode and judge column.'),
  metadata: z
    .union([z.boolean(), z.array(z.string().min(1))])
    .default(true)
    .describe('Columns kept in `episodes.metadata` (JSON): true = every column the mapping does not use, false = none, or a list.'),
  suite: z.string().min(1).optional().describe('`runs.suite` (default: the first file name without extension).'),
  notes: z.string().optional().describe('Appended to `runs.notes`.'),
});

/** A validated mapping (defaults filled in). */
export type Mapping = z.infer<typeof mappingSchema>;
/** A mapping as written in a JSON file (optional members may be omitted). */
export type MappingInput = z.input<typeof mappingSchema>;
export type ScoreSpec = z.infer<typeof scoreSpecSchema>;
export type JudgesSpec = z.infer<typeof judgesSpecSchema>;

/**
 * A manifest: one mapping per CSV file of the ingest, by file name (as given, or its base name).
 * Passed as `--map manifest.json`.
 */
export const manifestSchema = z.strictObject({
  files: z.record(z.string(), mappingSchema).describe('CSV file name -> its mapping.'),
});

export type FieldKind = Exclude<ValueKind, 'score'>;

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
  if (table === 'probe_answers') {
    // A long paired-probe file also carries the decision and its gold actions per row (repeated on
    // every probe row of a state): they become probe_decisions (one row per subject and state).
    out.push({ name: 'decision', kind: 'text', nullable: true, keyOnly: true }, { name: 'gold_actions', kind: 'text', nullable: true, keyOnly: true });
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
    verdict: 'from value: 1 ALIGNED, 0 MISALIGNED, null ERROR, any other value null',
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
    decision: ['decision', 'chosen_action'],
    gold_actions: ['gold_actions', 'gold_action', 'gold'],
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
/** Generic score columns (each present one is a score; its name becomes the scorer name). */
export const GENERIC_SCORE_COLUMNS = ['score', 'correct', 'value', 'accuracy', 'acc', 'exact_match', 'f1', 'pass'] as const;
/** Header names of wide judge columns (after `normalizeName`): `judge_a`, `judge1`, `gpt4_judge`, `grader_2`, `rater_x`. */
export const JUDGE_COLUMN = /^(judge|grader|rater)[_\d].*|.+_(judge|grader|rater)$/;

/** Mapping choices given as flags (`--subject`, `--item`, `--epoch`, `--scores`, `--judge-columns`, `--judged-scorer`). */
export interface MappingFlags {
  subject?: string;
  item?: string;
  epoch?: string;
  scores?: string[];
  judgeColumns?: string[];
  judgedScorer?: string;
  /** `--probes`: the files are long paired-probe files (probe_answers, plus probe_decisions when a decision column is there). */
  probes?: boolean;
}

export interface Detection {
  mapping: Mapping;
  /** Header columns the mapping does not use. */
  ignored: string[];
  /**
   * Columns no name explains whose values decide (an episodes file): numeric ones become scores (or
   * judges, for judge-like names), the others metadata. See `completeDetection`.
   */
  candidates: string[];
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

/** Schema columns the `--subject`, `--item` and `--epoch` flags set. */
export const FLAG_COLUMNS = { subject: 'subject_model', item: 'scenario_id', epoch: 'epoch' } as const;

/**
 * Builds a mapping from well-known header names (see `ALIASES`, `KNOWN_SCORERS`,
 * `GENERIC_SCORE_COLUMNS`, `JUDGE_COLUMN`), with the columns `flags` name taken as given.
 * Required columns that are missing are reported later (`resolvePlan`). For an episodes file the
 * columns left over are `candidates` for `completeDetection`.
 */
export function detectMapping(header: readonly string[], flags: MappingFlags = {}): Detection {
  const explicitEpisodes = flags.scores !== undefined || flags.judgeColumns !== undefined;
  const table = flags.probes ? 'probe_answers' : explicitEpisodes ? 'episodes' : detectTable(header);
  const index = new Map<string, string>();
  for (const h of header) {
    const n = normalizeName(h);
    if (!index.has(n)) index.set(n, h);
  }
  const used = new Set<string>();
  const columns: Record<string, string> = {};
  for (const [flag, field] of Object.entries(FLAG_COLUMNS)) {
    const col = flags[flag as keyof typeof FLAG_COLUMNS];
    if (col !== undefined && field in ALIASES[table]) {
      columns[field] = col;
      used.add(col);
    }
  }
  for (const c of [...(flags.scores ?? []), ...(flags.judgeColumns ?? [])]) used.add(c);
  for (const [field, aliases] of Object.entries(ALIASES[table])) {
    if (columns[field] !== undefined) continue;
    const col = findColumn(index, aliases, used);
    if (col !== undefined) {
      columns[field] = col;
      used.add(col);
    }
  }
  const scores: ScoreSpec[] = [];
  let judges: JudgesSpec | undefined;
  const candidates: string[] = [];
  if (table === 'episodes') {
    if (flags.scores !== undefined) {
      for (const c of flags.scores) scores.push({ scorer: c, column: c });
    } else {
      for (const scorer of KNOWN_SCORERS) {
        const col = index.get(scorer);
        if (col !== undefined) {
          scores.push({ scorer, column: col });
          used.add(col);
        }
      }
      let first = true;
      for (const name of GENERIC_SCORE_COLUMNS) {
        const col = findColumn(index, [name], used);
        if (col === undefined) continue;
        const spec: ScoreSpec = { scorer: normalizeName(col), column: col };
        used.add(col);
        if (first) {
          // An answer and an explanation column go with the first generic score.
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
          first = false;
        }
        scores.push(spec);
      }
    }
    if (flags.judgeColumns !== undefined) judges = { scorer: flags.judgedScorer ?? '', columns: [...flags.judgeColumns] };
    for (const h of header) if (!used.has(h)) candidates.push(h);
  }
  const mapping: Mapping = { table, columns, values: {}, constants: {}, scores, metadata: true };
  if (judges) mapping.judges = judges;
  return { mapping, ignored: table === 'episodes' ? [] : header.filter((h) => !used.has(h)), candidates };
}

/** What the values of a candidate column say (from one SQL pass, see `ingest-csv.ts`). */
export interface ColumnStats {
  /** Non-empty cells. */
  present: number;
  /** Cells that are a number or a score token. */
  numeric: number;
  /** Numeric cells whose value is neither 0 nor 1. */
  nonBinary: number;
}

/**
 * Completes a detected episodes mapping from the candidates' values: a column whose every
 * non-empty cell is a number or score token becomes a score (scorer = its name), or a judge column
 * when its name looks like one (`JUDGE_COLUMN`) and no `--judge-columns` were given; the judged
 * scorer is `--judged-scorer`, else the one score whose values are not all 0/1. Everything else
 * stays metadata. Returns a problem text when the judged scorer cannot be chosen.
 */
export function completeDetection(d: Detection, stats: Record<string, ColumnStats>, flags: MappingFlags = {}): string | null {
  const m = d.mapping;
  if (m.table !== 'episodes') return null;
  const numeric = (c: string) => {
    const s = stats[c];
    return s !== undefined && s.present > 0 && s.numeric === s.present;
  };
  const judgeCols: string[] = [];
  for (const c of d.candidates) {
    if (!numeric(c)) continue;
    if (flags.judgeColumns === undefined && JUDGE_COLUMN.test(normalizeName(c))) judgeCols.push(c);
    else if (flags.scores === undefined) m.scores.push({ scorer: c, column: c });
  }
  if (judgeCols.length > 0) m.judges = { scorer: flags.judgedScorer ?? '', columns: judgeCols };
  if (flags.judgedScorer !== undefined && !m.judges) return `--judged-scorer ${flags.judgedScorer} given, but no judge columns were found: pass --judge-columns COLS`;
  if (m.judges && m.judges.scorer === '') {
    const scored = m.scores.filter((s) => (stats[s.column]?.nonBinary ?? 0) > 0);
    if (scored.length === 1) m.judges.scorer = scored[0]!.scorer;
    else {
      const names = m.scores.map((s) => s.scorer);
      return `judge columns ${m.judges.columns.join(', ')} found, but not which scorer they grade: pass --judged-scorer NAME${names.length ? ` (scores: ${names.join(', ')})` : ''}`;
    }
  }
  return null;
}

/**
 * Applies flags to a mapping from a file (a flag must agree with what the file says: a repeated
 * choice that would silently override another is an error). Returns the problems.
 */
export function applyFlags(m: Mapping, flags: MappingFlags): string[] {
  const problems: string[] = [];
  if (flags.probes && m.table !== 'probe_answers') problems.push(`--probes is for long paired-probe files (table probe_answers); the map's table is ${m.table}`);
  const flagged = flags.subject !== undefined || flags.item !== undefined || flags.epoch !== undefined || flags.scores || flags.judgeColumns || flags.judgedScorer;
  if (flagged && m.table !== 'episodes' && (flags.scores || flags.judgeColumns || flags.judgedScorer)) {
    problems.push(`--scores, --judge-columns and --judged-scorer apply to episode files (the map's table is ${m.table})`);
  }
  for (const [flag, field] of Object.entries(FLAG_COLUMNS)) {
    const col = flags[flag as keyof typeof FLAG_COLUMNS];
    if (col === undefined || !(field in ALIASES[m.table])) continue;
    const had = m.columns[field];
    if (had !== undefined && had !== col) problems.push(`--${flag} ${col} conflicts with the map's columns.${field} (${JSON.stringify(had)}); give one of them`);
    else if (Object.hasOwn(m.constants, field)) problems.push(`--${flag} ${col} conflicts with the map's constants.${field}; give one of them`);
    else m.columns[field] = col;
  }
  for (const c of flags.scores ?? []) {
    const had = m.scores.find((s) => s.scorer === c);
    if (had && had.column !== c) problems.push(`--scores ${c} conflicts with the map's score "${c}" (column ${JSON.stringify(had.column)})`);
    else if (!had) m.scores.push({ scorer: c, column: c });
  }
  if (flags.judgeColumns) {
    if (m.judges && m.judges.columns.join('\u0000') !== flags.judgeColumns.join('\u0000')) problems.push(`--judge-columns conflicts with the map's judges.columns; give one of them`);
    else m.judges = { ...(m.judges ?? { scorer: '' }), columns: [...flags.judgeColumns] };
  }
  if (flags.judgedScorer) {
    if (!m.judges) problems.push('--judged-scorer needs judge columns (--judge-columns, or judges in the map)');
    else if (m.judges.scorer !== '' && m.judges.scorer !== flags.judgedScorer) problems.push(`--judged-scorer ${flags.judgedScorer} conflicts with the map's judges.scorer (${JSON.stringify(m.judges.scorer)})`);
    else m.judges.scorer = flags.judgedScorer;
  }
  if (m.judges && m.judges.scorer === '') problems.push('judge columns need the scorer they grade: pass --judged-scorer NAME');
  return problems;
}

/** The mapping as compact JSON-ready data (empty members dropped), for printing and `runs.config`. */
export function compactMapping(m: Mapping): Record<string, unknown> {
  const out: Record<string, unknown> = { table: m.table, columns: m.columns };
  if (Object.keys(m.values).length > 0) out.values = m.values;
  if (Object.keys(m.constants).length > 0) out.constants = m.constants;
  if (m.scores.length > 0) out.scores = m.scores;
  if (m.judges !== undefined) out.judges = m.judges;
  if (m.metadata !== true) out.metadata = m.metadata;
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
  if (m.judges !== undefined) {
    if (m.table !== 'episodes') problems.push(`judges: only an episodes mapping can have judge columns (table is ${m.table})`);
    const seen = new Set<string>();
    m.judges.columns.forEach((c, i) => {
      if (seen.has(c)) problems.push(`judges.columns.${i}: column "${c}" appears twice`);
      seen.add(c);
    });
  }
  if (m.metadata !== true && m.metadata !== false && m.table !== 'episodes') problems.push(`metadata: only episodes have a metadata column (table is ${m.table})`);
  return problems;
}

/** `--wide`: one column per subject (model), melted into long rows. */
export interface WideSpec {
  /** The subject columns, or `*`: every column but the item, the epoch and a row index. */
  subjects: string[] | '*';
  /** The scorer the values are scores of (default `score`). */
  scorer?: string;
}

/**
 * The mappings of a wide file: one per subject column, each reading that column as the scores of
 * `scorer` for a constant subject (the column name), the item from `--item`, the epoch from
 * `--epoch` (else 1), the other columns as metadata. `header` leaves out a row index. Returns a
 * problem (and the field it names) instead when the flags do not fit the header.
 */
export function wideMappings(header: readonly string[], spec: WideSpec, flags: MappingFlags): { mappings: Mapping[] } | { problem: string; field: string | null } {
  const list = header.map((h) => JSON.stringify(h)).join(', ');
  if (!flags.item) return { problem: `--wide needs --item COLUMN, the column naming the item (the header has ${list})`, field: null };
  if (flags.subject || flags.scores || flags.judgeColumns) return { problem: '--wide takes the subjects from --subjects-from-columns; --subject, --scores and --judge-columns do not go with it', field: null };
  for (const c of [flags.item, flags.epoch]) if (c !== undefined && !header.includes(c)) return { problem: `column "${c}" is not in the header (${list})`, field: c };
  const keys = new Set([flags.item, flags.epoch].filter((c): c is string => c !== undefined));
  const subjects = spec.subjects === '*' ? header.filter((h) => !keys.has(h)) : spec.subjects;
  if (subjects.length === 0) return { problem: `--subjects-from-columns: no column left besides the item (the header has ${list})`, field: null };
  for (const c of subjects) {
    if (!header.includes(c)) return { problem: `--subjects-from-columns: column "${c}" is not in the header (${list})`, field: c };
    if (keys.has(c)) return { problem: `--subjects-from-columns: "${c}" is the item or epoch column`, field: c };
  }
  const rest = header.filter((h) => !keys.has(h) && !subjects.includes(h));
  const scorer = spec.scorer ?? 'score';
  return {
    mappings: subjects.map((subject) => ({
      table: 'episodes' as const,
      columns: { scenario_id: flags.item!, ...(flags.epoch ? { epoch: flags.epoch } : {}) },
      values: {},
      constants: { subject_model: subject },
      scores: [{ scorer, column: subject }],
      metadata: rest,
    })),
  };
}
