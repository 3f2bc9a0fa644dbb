/**
 * Types shared by the phases of a CSV plan (`plan.ts`) and its SQL (`plan-sql.ts`).
 */
import type { ValueKind } from '../../store/csv-values.ts';
import type { CsvFileProblem } from '../../store/read-csv.ts';
import type { Mapping, MappedTable } from './mapping.ts';

/** Output tables of a CSV ingest. */
export type OutTable = 'episodes' | 'scores' | 'judgments' | 'probe_answers' | 'probe_decisions' | 'aggregates';

/** A check of one cell: `why` (over the raw `c<i>` columns) is NULL or a reason code. */
export interface CellCheck {
  field: string;
  order: number;
  kind: ValueKind;
  options?: readonly string[];
  why: string;
  raw: string;
  /** The cheap test used while loading (over the staged value and the raw columns). */
  bad: string;
}

/** A check of a row's converted values (over the staging columns). */
export interface RowCheck {
  field: string | null;
  order: number;
  why: string;
  values: string[];
  describe: (reason: string, values: unknown[]) => { code: string; message: string };
}

/** A constant or value-map entry, checked once (line 1). */
export interface LiteralCheck {
  why: string;
  kind: ValueKind;
  options?: readonly string[];
  text: string;
  field: string;
  /** Prefix of the message, e.g. `values.epoch["first"]`. */
  label: string;
}

/** Rows of a table's keys from one file, for duplicate checks. */
export interface KeySource {
  table: 'episodes' | 'judgments' | 'probe_answers' | 'probe_decisions' | 'aggregates';
  /** SELECT of (r: row, o: order, k: key text) from the staging table, bad rows left out. */
  sql: string;
  /** What a key is, in messages (`episode`, `judgment (episode, scorer, judge)`). */
  what: string;
  field: string | null;
  /**
   * SELECT of (h) from the staging table, bad rows left out: the key's 64-bit hash staged during
   * the load, NULL where the row's key cannot be hashed that way (see `keyHashSql`). Only when the
   * key is the joined episode id; a table whose sources all have it is pre-checked on it.
   */
  staged?: string;
}

export interface FilePlan {
  file: string;
  fileIndex: number;
  table: MappedTable;
  header: string[];
  mapping: Mapping;
  /** Staging table name. */
  stage: string;
  /** `CREATE TABLE <stage> AS ...` over a `read_csv(...)` relation (pass its SQL). */
  stageSql(relation: string): string;
  /** SELECT of the bad rows (at most `limit`) with their reasons, over the stage joined to the raw table. */
  explainSql(raw: string, limit: number): string;
  /** Problems of one explained row (`row` from `explainSql`), with `line` its physical line. */
  describeRow(row: Record<string, unknown>, line: number): CsvFileProblem[];
  literalChecks: LiteralCheck[];
  keys: KeySource[];
  /** SELECT of the counts: n (rows), bad (rows flagged `__bad`) and one per output table, plus max_epoch. */
  countsSql: string;
  /** SELECT per output table (file columns, schema order); `lines` names the line map table (aggregates). */
  outputs(lines: string): Partial<Record<OutTable, string[]>>;
  /** Source column indexes the staging table reads. */
  sourceColumns: number[];
  /** Defaults applied (column -> documented default), for `runs.notes`. */
  defaultsUsed: Record<string, string>;
  /** Header columns kept in `episodes.metadata`. */
  metadataColumns: string[];
  /** Header columns not used at all. */
  ignoredColumns: string[];
}

/** The judge verdict words, as a SQL list. */
export const VERDICTS = `('ALIGNED', 'MISALIGNED', 'ERROR')`;

/** Where a plan's problems go (all at line 1: they are about the mapping and the header). */
export type Fail = (field: string | null, code: string, message: string, order?: number) => void;

/**
 * A mapping resolved against a header, phase by phase: what each phase adds is what the SQL
 * builders (`plan-sql.ts`) read. Built by `resolvePlan`; the phases are exported to be tested alone.
 */
export interface Resolution {
  file: string;
  fileIndex: number;
  table: MappedTable;
  mapping: Mapping;
  header: string[];
  /** The mapping came from the header (for hints). */
  detected: boolean;
  indexColumn?: number;
  fail: Fail;
  /** Header name -> column index (first of duplicates; unnamed columns and the row index left out). */
  col: Map<string, number>;
  /** Source column indexes used so far. */
  used: Set<number>;
  /** Staged cells (`<conversion> AS "v_<field>"`, scores, judges, metadata). */
  inner: string[];
  cellChecks: CellCheck[];
  literalChecks: LiteralCheck[];
  /** SQL (in the outer SELECT and outputs) of each provided schema column. */
  fx: Map<string, string>;
  /** Schema columns mapped or constant. */
  provided: Set<string>;
  /** Schema column -> the header column it is read from. */
  sourceOf: Map<string, string>;
  scoreCols: { scorer: string; k: number; answer: boolean; explanation: boolean }[];
  judgeCols: { column: string; j: number }[];
  metadataColumns: string[];
  defaultsUsed: Record<string, string>;
}
