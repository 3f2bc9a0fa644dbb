/**
 * The all-or-nothing policy of the streamed ingests (`ingest inspect`, `ingest lm-eval`): each
 * input streams its rows into a `RunWriter` of its own (staged in a temp directory, nothing
 * visible), problems are collected across inputs (up to `max`), and the runs are committed
 * together only when every input was read clean; else every writer is aborted, and a store
 * directory the ingest created is removed again (`close`).
 */
import { existsSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import type { EpisodeRow, MessageRow, RunRow, ScoreRow } from '../schema/tables.ts';
import type { StandoffError } from '../errors.ts';
import { terminalLine } from '../escape.ts';
import { cleanupStore, type WriteRunResult } from '../store/write-run.ts';
import { RunWriter } from '../store/run-writer.ts';
import type { StagedRow } from '../store/staged-row.ts';
import { IngestProblems } from './ingest-problems.ts';

/** The rows of one unit (a sample, a document's line). */
export interface UnitRows {
  episodes: readonly EpisodeRow[];
  messages: readonly MessageRow[];
  scores: readonly ScoreRow[];
}

/** The rows of one unit, staged by `stagedRow` (`src/store/run-writer.ts`). */
export interface StagedUnitRows {
  episodes: readonly StagedRow[];
  messages: readonly StagedRow[];
  scores: readonly StagedRow[];
}

/** Staged lines of several units (`RunWriter.appendBlock`). */
export interface StagedLines {
  text: string;
  rows: number;
  chars: number;
  longest: number;
}

/** Where a scan sends one input's rows: `begin` with the run id, `rows` per unit, `end` with the run row and the units' ranks. */
export interface RunSink {
  begin(runId: string): Promise<void>;
  rows(unit: number, rows: UnitRows): Promise<void>;
  /** The same as `rows`, with the rows already staged (`stagedRow`, e.g. by a worker thread). */
  stagedRows(unit: number, rows: StagedUnitRows): Promise<void>;
  /** Lines of several units staged elsewhere, per table (`RunWriter.appendBlock`). */
  stagedBlock(block: Record<'episodes' | 'messages' | 'scores', StagedLines>): Promise<void>;
  end(run: RunRow, rank: Int32Array): Promise<void>;
}

export interface StagedRunsOptions {
  traces: string;
  replace?: boolean;
  dryRun?: boolean;
  /** Problems collected before stopping (default 20). */
  maxProblems?: number;
  /** Where problem lines go when there are several (default: stderr). */
  report?: (line: string) => void;
}

export class StagedRuns {
  readonly problems: StandoffError[] = [];
  readonly writers: RunWriter[] = [];
  readonly max: number;
  truncated = false;
  private committed = 0;
  private readonly storeExisted: boolean;

  private constructor(private readonly opts: StagedRunsOptions) {
    this.max = opts.maxProblems ?? 20;
    this.storeExisted = existsSync(opts.traces);
  }

  /** Starts an ingest: stale staging directories of the store are cleaned first (not for a dry run). */
  static async start(opts: StagedRunsOptions): Promise<StagedRuns> {
    const s = new StagedRuns(opts);
    if (!opts.dryRun) await cleanupStore(opts.traces);
    return s;
  }

  /** True when `max` problems are collected (the next input is not read). */
  full(): boolean {
    if (this.problems.length < this.max) return false;
    this.truncated = true;
    return true;
  }

  /**
   * A sink for one input: a writer opened at `begin` (not for a dry run, nor once there are
   * problems, nor when `skip(runId)`), rows appended while the ingest is clean, finished at `end`.
   */
  sink(skip: (runId: string) => boolean = () => false): RunSink {
    let writer: RunWriter | null = null;
    return {
      begin: async (runId) => {
        if (this.opts.dryRun || this.problems.length > 0 || skip(runId)) return;
        writer = await RunWriter.open(this.opts.traces, runId, { replace: this.opts.replace, trusted: true });
        this.writers.push(writer);
      },
      rows: async (unit, rows) => {
        if (!writer || this.problems.length > 0) return;
        await writer.append('episodes', rows.episodes, unit);
        await writer.append('messages', rows.messages, unit);
        await writer.append('scores', rows.scores, unit);
      },
      stagedRows: async (unit, rows) => {
        if (!writer || this.problems.length > 0) return;
        await writer.appendStaged('episodes', rows.episodes, unit);
        await writer.appendStaged('messages', rows.messages, unit);
        await writer.appendStaged('scores', rows.scores, unit);
      },
      stagedBlock: async (block) => {
        if (!writer || this.problems.length > 0) return;
        await writer.appendBlock('episodes', block.episodes);
        await writer.appendBlock('messages', block.messages);
        await writer.appendBlock('scores', block.scores);
      },
      end: async (run, rank) => {
        if (writer && this.problems.length === 0) await writer.finish(run, rank);
      },
    };
  }

  /** Adds a scan's problems. */
  add(problems: readonly StandoffError[], truncated: boolean): void {
    for (const p of problems) this.problems.push(p);
    if (truncated) this.truncated = true;
  }

  /** Throws the problems (each on its own line when there are several) as one {@link IngestProblems}. */
  throwIfProblems(): void {
    if (this.problems.length === 0) return;
    const list = this.problems.slice(0, this.max);
    const report = this.opts.report ?? ((line: string) => process.stderr.write(`${terminalLine(line)}\n`));
    if (list.length > 1 || this.truncated) for (const p of list) report(p.message);
    throw new IngestProblems(list, this.truncated || this.problems.length > this.max);
  }

  /** Commits every run, in order (one atomic commit each); `each` sees each writer's result. */
  async commitAll(each: (i: number, res: WriteRunResult) => void): Promise<void> {
    for (let i = 0; i < this.writers.length; i++) {
      const res = await this.writers[i]!.commit();
      this.committed++;
      each(i, res);
    }
  }

  /** Aborts what was not committed; a store directory this ingest created for runs it then dropped goes too (rmdir: only if empty). */
  async close(): Promise<void> {
    for (const w of this.writers) await w.abort();
    if (!this.storeExisted && this.committed === 0) await rmdir(this.opts.traces).catch(() => undefined);
  }
}
