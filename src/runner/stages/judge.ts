/** Stage: judge one unit's episode with the panel (valid episodes only; `../judges.ts`). */
import type { JudgmentRow } from '../../schema/tables.ts';
import type { EpisodeResult } from '../solver.ts';
import { judgeEpisode } from '../judges.ts';
import type { Rng } from '../../stats/rng.ts';
import type { UnitContext, UnitPlan } from './types.ts';

export function judgeUnit(ctx: UnitContext, u: UnitPlan, ep: Pick<EpisodeResult, 'episode' | 'messages'>, requestSeed: number, rng: Rng): Promise<JudgmentRow[]> {
  if (ep.episode.status !== 'valid') return Promise.resolve([]);
  return judgeEpisode({
    runId: ctx.runId,
    episodeId: u.id,
    subject: u.subject,
    messages: ep.messages,
    judges: ctx.panel,
    exclusion: ctx.cfg.judge_exclusion,
    requestSeed,
    rng,
    redactor: ctx.redactor,
    signal: ctx.signal,
  });
}
