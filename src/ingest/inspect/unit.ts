/**
 * One sample unit of an Inspect log, from its read result to what the scan needs
 * ({@link processUnit}): the sample's key, its mapped rows checked against their table schemas
 * (the first bad row is a problem naming the file, member and field), and the rows as the run
 * writer stages them (JSON lines, `stagedRow`). Pure and per unit: the same unit gives the same
 * result in the calling thread or in a worker (`pool.ts`), so the scan's order, problems and
 * output do not depend on which thread did the work.
 */
import type { z } from 'zod';
import type { StandoffError } from '../../errors.ts';
import { TABLES, fileColumns, type SqlColumn, type TableName } from '../../schema/tables.ts';
import { stagedRow, type StagedRow } from '../../store/staged-row.ts';
import { rowChecker } from './fast-check.ts';
import { problem, type SampleItem } from './log-parts.ts';
import { mapSample, type MappedSample } from './map.ts';
import type { ZipLimits } from './zip.ts';

/** Checks rows against their table's zod schema; the first bad row is a problem naming the member and field. */
export function validateRows(path: string, problems: StandoffError[], table: TableName, rows: readonly object[], member: string): boolean {
  const schema = TABLES[table] as z.ZodObject;
  const fast = rowChecker(table);
  for (let i = 0; i < rows.length; i++) {
    if (fast(rows[i]!)) continue; // surely valid (see fast-check.ts); else zod decides and words the error
    const r = schema.safeParse(rows[i]);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      problems.push(problem('invalidRow', path, member, `${table} row ${i + 1}: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`));
      return false;
    }
  }
  return true;
}

/** A unit's rows as the run writer stages them, per table. */
export interface StagedUnit {
  episodes: StagedRow[];
  messages: StagedRow[];
  scores: StagedRow[];
}

/** What the scan tallies of a valid sample. */
export interface UnitFacts {
  errored: boolean;
  messages: number;
  /** Scorer and numeric value (null: not numeric) of each score row, in row order. */
  scores: [string, number | null][];
}

/** A unit that could not be read, parsed or shape-checked. */
export interface UnitError {
  member: string;
  error: StandoffError;
}

/** A unit read clean: its key; then either the problem of its mapped rows or the rows. */
export interface UnitSample {
  member: string;
  error?: undefined;
  id: string | number;
  epoch: number;
  /** Set when a mapped row fails its table schema. */
  invalid?: StandoffError;
  facts?: UnitFacts;
  /** The mapped rows (when asked for: `keepMapped`). */
  mapped?: MappedSample;
  /** The rows staged (when asked for: `stage`). */
  staged?: StagedUnit;
}

export type UnitResult = UnitError | UnitSample;

export interface UnitContext {
  file: string;
  runId: string;
  model: string;
  /** False when the header is bad: samples are read and checked, not mapped. */
  map: boolean;
  keepMapped: boolean;
  stage: boolean;
}

let columns: Record<'episodes' | 'messages' | 'scores', SqlColumn[]> | null = null;

function stageRows(table: 'episodes' | 'messages' | 'scores', rows: readonly object[]): StagedRow[] {
  columns ??= { episodes: fileColumns('episodes'), messages: fileColumns('messages'), scores: fileColumns('scores') };
  const cols = columns[table];
  const out: StagedRow[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = stagedRow(cols, rows[i] as Record<string, unknown>);
  return out;
}

/** Maps, checks and (optionally) stages one read unit. */
export function processUnit(item: SampleItem, ctx: UnitContext): UnitResult {
  if (item.error) return { member: item.member, error: item.error };
  const sample = item.sample;
  const out: UnitSample = { member: item.member, id: sample.id, epoch: sample.epoch };
  if (!ctx.map) return out;
  const mapped = mapSample(ctx.runId, ctx.model, sample);
  const problems: StandoffError[] = [];
  const valid = (table: TableName, rows: readonly object[]) => validateRows(ctx.file, problems, table, rows, item.member);
  if (!valid('episodes', [mapped.episode]) || !valid('messages', mapped.messages) || !valid('scores', mapped.scores)) {
    out.invalid = problems[0]!;
    return out;
  }
  out.facts = {
    errored: mapped.episode.status === 'error',
    messages: mapped.messages.length,
    scores: mapped.scores.map((s) => [s.scorer, s.value]),
  };
  if (ctx.keepMapped) out.mapped = mapped;
  if (ctx.stage) out.staged = { episodes: stageRows('episodes', [mapped.episode]), messages: stageRows('messages', mapped.messages), scores: stageRows('scores', mapped.scores) };
  return out;
}

/** One table's staged lines of a run of units, ready for `RunWriter.appendBlock`. */
export interface StagedTableBlock {
  text: string;
  rows: number;
  chars: number;
  longest: number;
}

/** The staged lines of a job's valid units, per table (`_unit` the unit's index in the log, `_seq` the row's within the unit). */
export type StagedBlock = Record<'episodes' | 'messages' | 'scores', StagedTableBlock>;

/** Gathers the staged rows of consecutive units into one {@link StagedBlock}. */
export class BlockBuilder {
  private readonly lines: Record<keyof StagedBlock, string[]> = { episodes: [], messages: [], scores: [] };
  private readonly tally: Record<keyof StagedBlock, { chars: number; longest: number }> = {
    episodes: { chars: 0, longest: 0 },
    messages: { chars: 0, longest: 0 },
    scores: { chars: 0, longest: 0 },
  };

  add(unit: number, staged: StagedUnit): void {
    for (const table of ['episodes', 'messages', 'scores'] as const) {
      const rows = staged[table];
      const out = this.lines[table];
      const t = this.tally[table];
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        const tail = `"_unit":${unit},"_seq":${i}}`;
        const line = r.json.length > 2 ? `${r.json.slice(0, -1)},${tail}` : `{${tail}`;
        out.push(line);
        t.chars += r.chars;
        if (line.length > t.longest) t.longest = line.length;
      }
    }
  }

  build(): StagedBlock {
    const one = (table: keyof StagedBlock): StagedTableBlock => ({ text: this.lines[table].join('\n'), rows: this.lines[table].length, ...this.tally[table] });
    return { episodes: one('episodes'), messages: one('messages'), scores: one('scores') };
  }
}

/** A unit result as it crosses threads: problems as code and message. */
export type WireResult =
  | { member: string; error: { code: string; message: string } }
  | (Omit<UnitSample, 'invalid' | 'mapped' | 'staged'> & { invalid?: { code: string; message: string } });

/** A worker's answer to a job: each unit's result, and the staged lines of its valid units. */
export interface JobResult {
  results: WireResult[];
  block: StagedBlock;
}


/** A job for a worker (`worker.ts`): units [from, to) of a `.eval` file. */
export interface UnitJob {
  id: number;
  file: string;
  limits: ZipLimits | undefined;
  ctx: UnitContext;
  /** Units [from, to) of the file, in the order of `sampleUnits`. */
  from: number;
  to: number;
  /** The number of units the calling thread counted (a file that changed since is an error). */
  units: number;
}

