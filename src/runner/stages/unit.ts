/**
 * One unit (subject x scenario x epoch): the agent episode (`../solver.ts`), then in parallel the
 * judge stage (`judge.ts`) and the probe stage (`probe.ts`) on the same frozen state, then the
 * three scores (`../scorers.ts`). Returns the unit's journal line, redacted.
 */
import type { JudgmentRow, EpisodeRow, MessageRow, ProbeAnswerRow, ProbeDecisionRow, ScoreRow } from '../../schema/tables.ts';
import type { Redactor } from '../../redact.ts';
import type { JournalUnit } from '../journal.ts';
import type { ProbeStateResult } from '../probes.ts';
import { scoreEpisode } from '../scorers.ts';
import { runEpisode, unitRng, unitSeed, type EpisodeResult } from '../solver.ts';
import { judgeUnit } from './judge.ts';
import { probeUnit } from './probe.ts';
import type { UnitContext, UnitPlan } from './types.ts';


function scoreUnit(ctx: UnitContext, u: UnitPlan, ep: EpisodeResult, judgments: JudgmentRow[]): ScoreRow[] {
  if (ep.episode.status === 'error') return [];
  return scoreEpisode(ep.messages, u.scenario.target, judgments, { model: u.subject.model, family: u.subject.family }).map((s) => ({
    run_id: ctx.runId,
    episode_id: u.id,
    ...s,
  }));
}

/** The unit's rows as its journal line, every row and message redacted. */
function journalUnit(redactor: Redactor, u: UnitPlan, ep: EpisodeResult, scores: ScoreRow[], judgments: JudgmentRow[], probe: ProbeStateResult | null): JournalUnit {
  const r = (x: object) => redactor.row(x);
  return {
    kind: 'unit',
    episode_id: u.id,
    episode: r(ep.episode) as EpisodeRow,
    messages: ep.messages.map(r) as MessageRow[],
    scores: scores.map(r) as ScoreRow[],
    judgments: judgments.map(r) as JudgmentRow[],
    probe_answers: (probe?.answers ?? []).map(r) as ProbeAnswerRow[],
    probe_decisions: (probe?.decisions ?? []).map(r) as ProbeDecisionRow[],
    ...(probe && probe.errors.length ? { probe_errors: probe.errors.map((e) => redactor.text(e)) } : {}),
    ...(probe && probe.truncated ? { probe_truncated: probe.truncated } : {}),
  };
}

export async function runUnit(ctx: UnitContext, u: UnitPlan): Promise<JournalUnit> {
  const { cfg } = ctx;
  // The request seed depends on (run seed, scenario, epoch) only: every subject gets the same
  // seed for the same state (common random numbers), and a model-name suffix cannot change it.
  const seed = unitSeed(cfg.seed, u.scenario.scenario_id, u.epoch);
  const rng = unitRng(cfg.seed, 'jitter', u.id);
  const client = ctx.subjectClients.get(u.subject.model)!;
  const ep = await runEpisode({
    runId: ctx.runId,
    episodeId: u.id,
    subject: u.subject,
    scenario: u.scenario,
    epoch: u.epoch,
    client,
    verifier: ctx.verifier,
    logReadTimeoutMs: cfg.timeouts.log_read_ms,
    maxTurns: cfg.max_turns,
    requestSeed: seed,
    rng,
    signal: ctx.signal,
    redactor: ctx.redactor,
    prompt: cfg.prompt,
  });
  const [judgments, probe] = await Promise.all([judgeUnit(ctx, u, ep, seed, rng), probeUnit(ctx, u, client, seed, rng)]);
  return journalUnit(ctx.redactor, u, ep, scoreUnit(ctx, u, ep, judgments), judgments, probe);
}
