/**
 * The typed results of a report (what results.json holds): the Standoff suite's and the generic
 * one's. Types only, so the renderers (html/*) and the builder (build-report.ts) share them
 * without importing each other.
 */
import type { RankingSection } from './sections/ranking.ts';
import type { CostsSection } from './sections/costs.ts';
import type { SummaryResult, RunHash } from './sections/summary.ts';
import type { ResultsSection } from './sections/results.ts';
import type { RecomputedSection } from './sections/recomputed.ts';
import type { GroundedSection } from './sections/grounded.ts';
import type { SlicesSection } from './sections/slices.ts';
import type { PairwiseSection } from './sections/pairwise.ts';
import type { JudgesSection } from './sections/judges.ts';
import type { ProbesSection } from './sections/probes.ts';
import type { EpisodesSection } from './sections/episodes.ts';
import type { GenericSections, Reconciliation } from './generic.ts';

export interface ReportResults {
  schema: string;
  standoff_version: string;
  options: { seed: number; resamples: number; level: number; allow_judge_errors: number; allow_truncated: number; allow_missing: number; runs: string[] };
  inputs: RunHash[];
  summary: Omit<SummaryResult, 'hashes' | 'gate'>;
  gate: SummaryResult['gate'];
  results: ResultsSection;
  /** The log's own per-episode gathered_evidence beside Standoff's recomputation from the transcript (empty for Standoff's runs). */
  recomputed: RecomputedSection;
  /** The log's own aggregates beside Standoff's recomputation (the core reconciliation section; empty for Standoff's runs). */
  reconciliation: Reconciliation[];
  grounded: GroundedSection;
  slices: SlicesSection;
  pairwise: PairwiseSection;
  /** Ranks, rank intervals and tiers (three or more subjects; else null). */
  ranking: RankingSection | null;
  judges: JudgesSection;
  probes: ProbesSection;
  episodes: EpisodesSection;
  /** Section 9: tokens, latency, cost (with --prices), the cost frontier and rerun agreement. */
  costs: CostsSection;
  limitations: string[];
  figures: { name: string; caption: string; files: string[] }[];
}

/** results.json of a store that is not a Standoff suite (`generic.ts`). */
export interface GenericReportResults {
  schema: string;
  standoff_version: string;
  /** 'generic': every scorer is a metric; Standoff's own sections are absent. */
  report: 'generic';
  options: ReportResults['options'] & { slices: string[] };
  inputs: RunHash[];
  summary: Omit<SummaryResult, 'hashes' | 'gate'>;
  gate: SummaryResult['gate'];
  generic: GenericSections;
  figures: { name: string; caption: string; files: string[] }[];
}


/** results.json's schema tag. */
export const RESULTS_SCHEMA = 'standoff-report/1';
