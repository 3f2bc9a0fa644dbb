/**
 * The values the run's stages hand each other (`../run.ts` calls them in order: plan, check the
 * endpoints, run the episodes, commit, summarise; judging and probing happen per unit, inside
 * the episodes stage). Each stage takes one of these and returns the next.
 */
import type { Scenario } from '../../schema/scenario.ts';
import type { EpisodeRow, JudgmentRow, MessageRow, ProbeAnswerRow, ProbeDecisionRow, RunRow, ScoreRow } from '../../schema/tables.ts';
import type { StateManifest } from '../../store/state-manifest.ts';
import type { Redactor } from '../../redact.ts';
import type { FaultSpec, Verifier } from '../../../verifier/server.ts';
import type { ResolvedConfig, ResolvedModel } from '../config.ts';
import type { JournalContents, JournalHeader } from '../journal.ts';
import type { JudgePanelMember } from '../judges.ts';
import type { ModelClient } from '../solver.ts';

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

/** A deterministic share of a run's units (`--shard i/N`): units whose index in the plan is i-1 modulo N. */
export interface ShardSpec {
  /** 1-based. */
  index: number;
  count: number;
}

export interface EvaluationOptions {
  config: ResolvedConfig;
  runId: string;
  traces: string;
  replace?: boolean;
  /** Continue the run's journal instead of starting a new one. */
  resume?: boolean;
  /** Run only this share of the units (`--shard i/N`); the run records it (`runs.config.shard`). */
  shard?: ShardSpec;
  progress?: ProgressMode;
  /** Diagnostics sink (default: stderr). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Default fault for every verifier registration (tests: failed log reads). */
  verifierFaults?: FaultSpec;
  /** Test hook: called after each unit is durable in the journal. */
  onUnit?: (done: number, total: number) => void;
}

/** One unit of work: one subject x scenario x epoch. */
export interface UnitPlan {
  id: string;
  subject: ResolvedModel;
  scenario: Scenario;
  epoch: number;
}

/** What the plan stage decides: the units, the run's identity and where its journal stands. */
export interface RunPlan {
  cfg: ResolvedConfig;
  runId: string;
  traces: string;
  shard: ShardSpec | null;
  redactor: Redactor;
  /** Progress lines, redacted and made terminal-safe. */
  log: (line: string) => void;
  scenarios: Scenario[];
  scenarioIds: string[];
  manifest: StateManifest;
  /** The units of this run (of this shard, when sharded), in (subject, scenario, epoch) order. */
  units: UnitPlan[];
  planIds: Set<string>;
  total: number;
  hash: string;
  jpath: string;
  header: JournalHeader;
  /** Units already done in the journal (resume). */
  done: Set<string>;
  resumedFrom: number;
  resumeContents: JournalContents | null;
}

/** What every unit of a run shares. */
export interface UnitContext {
  cfg: ResolvedConfig;
  runId: string;
  redactor: Redactor;
  signal: AbortSignal;
  verifier: Verifier;
  subjectClients: Map<string, ModelClient>;
  panel: JudgePanelMember[];
}

/** A run's rows, table by table. */
export interface BuiltRun {
  run: RunRow;
  episodes: EpisodeRow[];
  messages: MessageRow[];
  scores: ScoreRow[];
  judgments: JudgmentRow[];
  probe_answers: ProbeAnswerRow[];
  probe_decisions: ProbeDecisionRow[];
}
