/**
 * Calibration of the probe decisions (the report's section 7): per subject, the expected
 * calibration error and reliability bins of the confidence the subject gave the option it chose,
 * on the non-ambiguous raw decisions, in (run, state) order.
 *
 *   loadCalibration(db, { subject, bins }) -> Map<subject, Calibration> | null (no probabilities anywhere)
 *
 * One streamed pass over the decisions (no answers read). Each row carries an integer subject key
 * and is folded into that subject's bins as it arrives (`CalibrationBins`: nothing held per
 * decision). The rows are sorted by (subject key, run key, state id), the keys being dense ranks
 * of the subject label and of the run id (`withSubjectKeys`), so each subject's rows come in
 * (run_id, state_id) order, as they did sorted on the strings, and the bins' floating-point sums
 * are formed in that order.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { CalibrationBins, type CalibrationBin } from '../stats/index.ts';
import { rawDecisionSql } from '../schema/tables.ts';
import { forEachRow, type Plain, type SqlParams } from '../store/duckdb.ts';
import { withEpisodeTargets, withSubjectKeys, type SubjectExpr } from './probe-temp-tables.ts';

export interface Calibration {
  /** Decisions with a confidence in [0, 1]. */
  n: number;
  /** Decisions without probabilities or without a parseable choice. */
  without_probabilities: number;
  ece: number | null;
  mce: number | null;
  bins: CalibrationBin[];
}

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

export interface CalibrationOptions {
  /** The subject label of decision `d` and the join it needs. */
  subject: SubjectExpr;
  bins: number;
}

/** One subject's calibration from its decisions (`m`) and the bins of those with a confidence. */
export function finishCalibration(m: number, bins: CalibrationBins): Calibration {
  const e = bins.result();
  return { n: e.n, without_probabilities: m - e.n, ece: e.ece, mce: e.maxCalibrationError, bins: e.bins };
}

/** The confidence: the probability `option_probs` gives `chosen_action`, as a number (else NULL). */
const CONFIDENCE_SQL = `CASE WHEN d.option_probs IS NOT NULL AND d.chosen_action IS NOT NULL
  THEN TRY_CAST(json_extract_string(d.option_probs, '$."' || d.chosen_action || '"') AS DOUBLE) END`;

/**
 * The non-ambiguous raw decisions, keyed, in (subject, run, state) order. A decision joins every
 * distinct (domain, decision type, variant, target) of its scenario's episodes, as it always has.
 */
const ROWS_SQL = `
  SELECT k.ix, d.option_probs IS NOT NULL AS has_probs, ${CONFIDENCE_SQL} AS conf, d.correct AS action
  FROM probe_decisions d
  LEFT JOIN probe_calibration_targets m USING (run_id, scenario_id)
  JOIN probe_calibration_keys k ON k.run_id = d.run_id AND k.subject_model = d.subject_model
  WHERE ${rawDecisionSql('d')} AND NOT coalesce(m.target = 'NOANSWER', false)
  ORDER BY k.ix, k.run_ix, d.state_id`;

/**
 * Each subject's calibration (subjects with a non-ambiguous raw decision), or null when no
 * decision carries probabilities. One subject's bins are open at a time.
 */
export async function loadCalibration(db: { conn: DuckDBConnection; q: Q }, o: CalibrationOptions): Promise<Map<string, Calibration> | null> {
  const targets = (fn: () => Promise<Map<string, Calibration> | null>) => withEpisodeTargets(db.q, 'probe_calibration_targets', ['domain', 'decision_type', 'variant'], fn);
  return withSubjectKeys(db.q, 'probe_calibration_keys', o.subject, (labels) => targets(async () => {
    const done = new Map<string, Calibration>();
    let cur = -1;
    let m = 0;
    let bins = new CalibrationBins(o.bins);
    let withProbs = 0;
    const finish = () => done.set(String(labels.get(cur)), finishCalibration(m, bins));
    await forEachRow(db.conn, ROWS_SQL, undefined, (cols, rows) => {
      const [ix, hasProbs, conf, action] = cols;
      for (let i = 0; i < rows; i++) {
        const s = ix(i) as number;
        if (s !== cur) {
          // Rows come a subject at a time.
          if (cur >= 0) finish();
          cur = s;
          m = 0;
          bins = new CalibrationBins(o.bins);
        }
        m++;
        if (hasProbs(i) === true) withProbs++;
        const c = conf(i);
        if (typeof c === 'number' && c >= 0 && c <= 1) bins.add(c, action(i) === true);
      }
    });
    if (cur >= 0) finish();
    return withProbs === 0 ? null : done;
  }));
}
