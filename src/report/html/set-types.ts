/** The shapes of the episode sets behind index.html's links (`episode-sets.ts`, `pair-sets.ts`). */
/** Where a report subject label comes from: one (run, subject_model). */
export interface SubjectSource {
  subject: string;
  run_id: string;
  subject_model: string;
}

export type SetParam = string | boolean;

export interface EpisodeSetDef {
  /** Stable key, e.g. `grounded/<subject>/gathered_incorrect` (ordering and tests). */
  key: string;
  /** Shown above the list, e.g. `sim:hasty · gathered evidence, incorrect action`. */
  title: string;
  /** The episodes (samples) the set holds, from results.json: the loader checks its SQL finds exactly these. */
  count: number;
  /** Distinct items (scenario x epoch) the set covers, where a count stands for items (a four-cell count): the loader checks these too. */
  items?: number;
  /**
   * The number a cell linked to this set prints (a four-cell count: its items; a rate: its trials):
   * when given, index.html's build fails if a linked cell prints another (as a plain count, or as
   * the denominator of `x/n`).
   */
  shows?: number;
  /** SELECT run_id, episode_id, scenario_id, epoch ... with `$name` parameters; ordered. */
  sql: string;
  /**
   * The same rows as `sql` by a cheaper query that holds only on this store (a measured set's
   * without its join back to episodes, where the gate found the run's episode ids unique): the
   * loader runs it instead of `sql` when the set is queried alone; the page shows `sql`.
   */
  direct?: string;
  params: Record<string, SetParam>;
  /**
   * The same sets answered together (`load-episodes.ts`): a query over the relation `p` (a row per
   * set: `set_idx` and a column per parameter, named as the parameter) that returns `set_idx, run_id,
   * episode_id, scenario_id, epoch`, for each row of `p` exactly the rows `sql` returns with that
   * row's values. Sets with the same `batch` (and the same parameter names and types) cost one pass.
   */
  batch?: string;
  /**
   * A judge set in parts (a subject's "eligible judges disagree", or a judge pair's "gave different
   * values"), so the loader can answer every judge set of one scorer in one pass (`judge-batch.ts`)
   * with the same rows as `sql`: the subject's run and model, or the pair's two judges.
   */
  judge?: JudgeSetPart;
  /** The scorer the set is about: its list shows that scorer's value and answer (default: the `scorer` parameter, if any). */
  scorer?: string;
}

/** What a judge set is about (see {@link EpisodeSetDef.judge}): exactly one of `subject` and `pair`. */
export interface JudgeSetPart {
  scorer: string;
  subject?: { run: string; model: string };
  pair?: [string, string];
}

/** A generic report's subject label within its suite, and the run and model it stands for. */
export interface GenericSubjectSource extends SubjectSource {
  suite: string;
}

