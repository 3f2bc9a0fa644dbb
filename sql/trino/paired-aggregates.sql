-- Standoff: per-cluster sufficient statistics of a paired comparison a - b of one metric, for
--   standoff ci paired --from-aggregates FILE
-- Trino: positional parameters, PREPARE q FROM <text>; EXECUTE q USING 'A', 'B'.
-- Input: a relation metric_rows with the metric columns (see cluster-aggregates.sql). Pairs are
-- (scenario_id, epoch) keys measured for both subjects; scenario_id is the cluster. Per cluster:
-- n pairs, sums, sums of squares and the cross-product sum of the paired values (for 0/1 values
-- the four pattern counts: both right = sum_ab, only a = sum_a - sum_ab, only b = sum_b - sum_ab,
-- both wrong = n - sum_a - sum_b + sum_ab), keys measured for one subject only (only_a, only_b),
-- and keys a subject has more than once (duplicates: several runs; the reader refuses them).
WITH a AS (
  SELECT scenario_id, epoch, min(value) AS value, count(*) AS k
  FROM metric_rows WHERE subject_model = ? AND value IS NOT NULL
  GROUP BY scenario_id, epoch
), b AS (
  SELECT scenario_id, epoch, min(value) AS value, count(*) AS k
  FROM metric_rows WHERE subject_model = ? AND value IS NOT NULL
  GROUP BY scenario_id, epoch
)
SELECT
  coalesce(a.scenario_id, b.scenario_id) AS scenario_id,
  sum(CASE WHEN a.k IS NOT NULL AND b.k IS NOT NULL THEN 1 ELSE 0 END) AS n,
  coalesce(sum(CASE WHEN b.k IS NOT NULL THEN a.value END), 0) AS sum_a,
  coalesce(sum(CASE WHEN a.k IS NOT NULL THEN b.value END), 0) AS sum_b,
  coalesce(sum(CASE WHEN b.k IS NOT NULL THEN a.value * a.value END), 0) AS sum_sq_a,
  coalesce(sum(CASE WHEN a.k IS NOT NULL THEN b.value * b.value END), 0) AS sum_sq_b,
  coalesce(sum(a.value * b.value), 0) AS sum_ab,
  sum(CASE WHEN b.k IS NULL THEN 1 ELSE 0 END) AS only_a,
  sum(CASE WHEN a.k IS NULL THEN 1 ELSE 0 END) AS only_b,
  sum(CASE WHEN a.k > 1 OR b.k > 1 THEN 1 ELSE 0 END) AS duplicates
FROM a FULL OUTER JOIN b
  ON a.scenario_id = b.scenario_id AND a.epoch IS NOT DISTINCT FROM b.epoch
GROUP BY coalesce(a.scenario_id, b.scenario_id)
