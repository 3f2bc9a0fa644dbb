-- Standoff: per-cluster sufficient statistics of one metric, for
--   standoff ci exact     --from-aggregates FILE [--by COLS]
--   standoff ci bootstrap --from-aggregates FILE [--by COLS]
-- Input: a relation metric_rows with the metric columns (run_id, subject_model, scenario_id,
-- epoch, domain, decision_type, variant, episode_id, value), one row per observation, value NULL
-- where not measured. Output: one row per (subject_model, run_id, domain, decision_type, variant,
-- scenario_id); scenario_id is the cluster. Rows with the same group and cluster are added up by
-- the reader, so a file may also be written in parts (one per partition) and concatenated.
-- Plain SQL: the same text runs on DuckDB, Spark SQL and Trino (docs/scale.md). Shipped in the
-- package (sql/), read by aggregateQuery in src/analysis/ci-aggregates.ts.
SELECT
  subject_model,
  run_id,
  domain,
  decision_type,
  variant,
  scenario_id,
  count(value) AS n,
  coalesce(sum(value), 0) AS sum,
  coalesce(sum(value * value), 0) AS sum_sq,
  count(*) - count(value) AS not_measured,
  sum(CASE WHEN value IS NOT NULL AND value <> 0 AND value <> 1 THEN 1 ELSE 0 END) AS nonbinary
FROM metric_rows
GROUP BY subject_model, run_id, domain, decision_type, variant, scenario_id
