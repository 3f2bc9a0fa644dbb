/**
 * The pure statistics library: every export by name (no `export *`), so the public surface is
 * visible here. Internal helpers (arg-checks, judge-panel, krippendorff-core, p-values) are not
 * exported.
 */

// Random numbers
export { createRng, type Rng } from './rng.ts';

// Binomial proportions
export { clopperPearson, type BinomialInterval, type ClopperPearsonOptions, type Sided } from './clopper-pearson.ts';
export { wilson, type WilsonInterval, type WilsonOptions } from './wilson.ts';

// Inter-rater reliability
export { krippendorffAlpha, type KrippendorffAlphaResult, type AlphaLevel, type Rating } from './krippendorff-alpha.ts';
export {
  krippendorffAlphaBootstrap,
  type KrippendorffAlphaBootstrapOptions,
  type KrippendorffAlphaBootstrapResult,
} from './krippendorff-alpha-bootstrap.ts';
export { cohenKappa, type CohenKappaResult } from './cohen-kappa.ts';
export {
  krippendorffAlphaBootstrapCounts,
  type KrippendorffAlphaBootstrapCountsResult,
} from './krippendorff-alpha-bootstrap-counts.ts';

// Judge panels
export { SELF_EXCLUSION_DEFAULT } from './judge-panel.ts';
export {
  medianOfJudges,
  type JudgeScores,
  type MedianOfJudgesOptions,
  type MedianOfJudgesResult,
  type SampleMedian,
  type ExcludeBy,
  type Judge,
  type JudgedSample,
} from './median-of-judges.ts';
export {
  majorityVerdict,
  type JudgeVerdicts,
  type MajorityVerdictOptions,
  type MajorityVerdictResult,
  type SampleVerdict,
  type TieRule,
  type Label,
} from './majority-verdict.ts';
export {
  leaveOneJudgeOut,
  type LeaveOneJudgeOutOptions,
  type LeaveOneJudgeOutResult,
  type JudgeInfluence,
  type SubjectMean,
  type SubjectDelta,
} from './leave-one-judge-out.ts';
export { judgePairAgreement, type JudgePairAgreement, type JudgePairAgreementOptions, type JudgePairInput } from './judge-pair-agreement.ts';

// Multiple comparisons
export { holm } from './holm.ts';
export { benjaminiHochberg } from './benjamini-hochberg.ts';

// Calibration
export {
  expectedCalibrationError,
  CalibrationBins,
  type CalibrationBin,
  type ExpectedCalibrationErrorOptions,
  type ExpectedCalibrationErrorResult,
} from './expected-calibration-error.ts';

// Paired probes (Li, Krishnan & Padman, "Reading Right, Acting Wrong")
export { groupBy } from './group-by.ts';
export {
  probeOutcomes,
  probeOutcomeFromTally,
  probeShareCounts,
  type ProbeShareName,
  type ProbeOutcomeGroup,
  type ProbeOutcomesOptions,
  type Share,
} from './probe-outcomes.ts';
export { addProbeState, probeTally, type ProbeRow, type ProbeTally, type WeightedProbeRow } from './probe-tally.ts';
export {
  probeSufficiency,
  type ProbeState,
  type ProbeSufficiencyResult,
  type ProbeAnswerGroup,
} from './probe-sufficiency.ts';
export {
  errorConcentration,
  type ConcentrationSubject,
  type ErrorConcentrationOptions,
  type ErrorConcentrationResult,
} from './error-concentration.ts';
export { spearmanCorrelation, spearmanBootstrap, type SpearmanBootstrapResult } from './spearman-correlation.ts';

// Bootstrap, standard errors and power (added by their author below)
export {
  bootstrap,
  type Statistic,
} from './bootstrap.ts';
export { bootstrapMean, meanUnits, type BootstrapMeanOptions } from './bootstrap-mean.ts';
export {
  bootstrapStatistic,
  prepareBootstrapStatistic,
  finishBootstrapStatistic,
  checkStatisticSpec,
  type BootstrapStatisticOptions,
  type BootstrapStatisticResult,
  type PreparedBootstrapStatistic,
} from './bootstrap-statistic.ts';
export { computeBlocks, blockCount, resamplingStatistic, BLOCK_RESAMPLES, type BlockInput } from './resample-blocks.ts';
export { type StatisticSpec, type WeightedStatistic } from './weighted-statistic.ts';
export { median, medianStatistic } from './median.ts';
export { quantile, quantileStatistic } from './quantile.ts';
export { trimmedMean, trimmedMeanStatistic } from './trimmed-mean.ts';
export { standardDeviation, standardDeviationStatistic } from './standard-deviation.ts';
export { meanStatistic } from './mean-statistic.ts';
export { pairedBootstrap, pairedDifferences, type PairedBootstrapOptions, type PairedBootstrapResult, type PairedDifferences } from './paired-bootstrap.ts';
export { clusterBootstrap, type ClusterBootstrapOptions, type ClusterBootstrapResult } from './cluster-bootstrap.ts';
export {
  type BootstrapOptions,
  type BootstrapResult,
  type BootstrapMethod,
  type BcaDetails,
  MAX_RESAMPLES,
} from './bootstrap-internals.ts';
export { bootstrapInterval, DEGENERATE_BCA_NOTE, type BootstrapInterval, type BootstrapIntervalOptions } from './bootstrap-interval.ts';
export { normInterQuantile } from './norm-inter-quantile.ts';
export { jackknifeAcceleration } from './jackknife-acceleration.ts';
export { type RatioEngine, autoUsesMultinomial } from './ratio-bootstrap.ts';
export { cltStandardError, cltStandardErrorFromMoments, type CltStandardErrorOptions } from './clt-standard-error.ts';
export {
  clusteredStandardError,
  clusteredStandardErrorFromTotals,
  type ClusteredStandardErrorOptions,
  type ClusteredVariant,
} from './clustered-standard-error.ts';
export { type ClusterId } from './cluster-totals.ts';
export { pairedStandardError, pairedStandardErrors, pairedStandardErrorFromMoments, type PairedMoments, type PairedStandardError, type PairedStandardErrorOptions } from './paired-standard-error.ts';
export {
  pairedPower,
  type PairedPowerOptions,
  type PairedSpread,
  type PowerAlternative,
} from './paired-power.ts';
export { minimumDetectableEffect, type MinimumDetectableEffectOptions } from './minimum-detectable-effect.ts';
export { binomialPmf } from './binomial-pmf.ts';
export { sampleBinomial, type UniformSource } from './binomial-sample.ts';
export { sampleMultinomial } from './multinomial-sample.ts';
export {
  createLaneCountKernel,
  createLaneSumKernel,
  createPairSumKernel,
  createSumKernel,
  LANES,
  type LaneCountKernel,
  type Lanes,
  type LaneSumKernel,
  type PairSumKernel,
  type SumKernel,
} from './draw-kernels.ts';
export { createXoshiro128, type Xoshiro128 } from './xoshiro128.ts';

// Paired comparisons with clustered pairs, count-based entry points (sampling unit: the scenario)
export { pairedZTest, type PairedZTest, type PairedZTestOptions } from './paired-z-test.ts';
export {
  clusteredPairedStandardError,
  type ClusteredPairedStandardError,
  type ClusteredPairedStandardErrorOptions,
} from './clustered-paired-standard-error.ts';
export { clusteredPairedFromTotals, type ClusteredPairedTotals } from './clustered-paired-from-totals.ts';
export { pairedClusterBootstrap, pairedClusterInterval, type PairedClusterBootstrapResult } from './paired-cluster-bootstrap.ts';
export { pairedColumnsSummary, type PairCells, type PairedColumnsSummary } from './paired-columns.ts';
export { clusterBootstrapTotals } from './cluster-bootstrap-totals.ts';

// Decisions: non-inferiority, power and sample size, ranking (standoff compare / plan / rank)
export { nonInferiorityTest, type NonInferiorityTest } from './non-inferiority-test.ts';
export { noncentralTCdf } from './noncentral-t-cdf.ts';
export { twoProportionPower, twoProportionSampleSize, twoProportionMde, type TwoProportionDesign } from './two-proportion-power.ts';
export { tTestPower, tTestSampleSize, tTestMde, type TTestDesign, type TTestType } from './t-test-power.ts';
export { designEffect } from './design-effect.ts';
export { intraclassCorrelation } from './intraclass-correlation.ts';
export { solveIncreasing } from './solve-increasing.ts';
export { bootstrapRanks, type RankTask, type SubjectRanks } from './bootstrap-ranks.ts';
export { compactLetterDisplay } from './compact-letter-display.ts';
export { bradleyTerry, type Preference, type BradleyTerryFit } from './bradley-terry.ts';
export { addClusterMoments, clusteredCltInterval, CLT_MIN_CLUSTERS, CLT_MIN_EVENTS, emptyClusterMoments, type ClusterMoments, type ClusteredCltInterval } from './clustered-clt-interval.ts';
