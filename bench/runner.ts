/**
 * Runner benchmarks (all against the in-process sim endpoint and the real verifier, real HTTP on
 * 127.0.0.1, writing real Parquet runs to a temp store):
 *
 * 1. `demo` preset wall time: 270 episodes + probe mode + 3 judges, zero sim latency.
 * 2. Throughput at concurrency 32 with 100 ms sim latency (agent episodes only, so every request
 *    is on the critical path) vs the ideal 32 / latency = 320 requests/s: model requests per
 *    second, the same unit as the ideal (each of the 32 slots can complete at most one request per
 *    latency). Whole run (ramp-up and tail included) and steady state (units finished between 10%
 *    and 90% of the run, converted to requests with the run's requests per episode). Also: the main
 *    thread's busy fraction during the units (near 1 = the client is CPU-bound), the journal's
 *    syncs (group commit batches), and the overhead per episode at this concurrency
 *    (32 x steady seconds per unit, minus the model's time per episode).
 * 3. Runner overhead per episode: concurrency 1, 100 ms latency: episode wall time minus the
 *    model's time, i.e. what the target calls "excluding the model": the sim endpoint reports how
 *    long it held each request (arrival to reply: the latency as its 1 ms-grained timer delivered
 *    it, and any sim work that overran the latency), summed over the run. What remains is HTTP
 *    client, SDK, verifier reads, transcript handling, scoring, and the journal hand-off.
 *    `overheadVsNominalLatencyMs` is the older figure, wall minus turns x nominal latency; it
 *    differs from the measured one by the sim timer's jitter (up to about 1 ms per request).
 * 4. Memory over a long run (10,044 episodes with judges and probes): RSS sampled during the run
 *    and at the final write.
 *
 * `benchRunner()` returns the numbers; run directly (`npx tsx bench/runner.ts`) it prints them.
 * Env: `BENCH_RUNNER_LONG_EPISODES` (default 10,044 = the 10,000-episode target rounded up to whole epochs; 0 skips), `BENCH_RUNNER_QUICK=1` (smaller).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseConfig, type ConfigInput } from '../src/runner/config.ts';
import { runCommand, runEvaluation, type RunSummary } from '../src/runner/run.ts';

export interface RunnerBenchResult {
  demo: { episodes: number; wallMs: number; phases: RunSummary['phases']; requests: number; episodesPerSec: number; rssMb: number };
  throughput: {
    concurrency: number;
    latencyMs: number;
    requests: number;
    unitsMs: number;
    requestsPerSec: number;
    idealPerSec: number;
    efficiency: number;
    /** Between 10% and 90% of units done (ramp-up and tail excluded). */
    steadyRequestsPerSec: number;
    steadyEfficiency: number;
    /** Event-loop utilisation of the main thread from the first to the last unit done (1 = never idle). */
    mainThreadBusy: number;
    /** Journal syncs for `episodes` units (group commit). */
    episodes: number;
    journalSyncs: number;
    /** Steady-state wall per unit per slot minus the model's time per episode. */
    overheadPerEpisodeMs: number;
  };
  overhead: {
    episodes: number;
    latencyMs: number;
    meanEpisodeMs: number;
    meanTurns: number;
    /** The sim's time per episode (sum over its requests of arrival to reply). */
    modelMsPerEpisode: number;
    /** meanEpisodeMs - modelMsPerEpisode: the runner's own time per episode. */
    overheadPerEpisodeMs: number;
    /** Of which inside the agent episode (HTTP, SDK, verifier reads, transcript). */
    inEpisodeOverheadMs: number;
    /** Of which after the episode (scoring, redaction, journal hand-off, scheduling). */
    afterEpisodeMs: number;
    /** meanEpisodeMs - meanTurns x latency (the earlier definition). */
    overheadVsNominalLatencyMs: number;
    journalSyncs: number;
    zeroLatencyEpisodeMs: number;
  };
  memory: null | {
    episodes: number;
    wallMs: number;
    rssStartMb: number;
    rssAtMb: Record<string, number>;
    rssPeakDuringUnitsMb: number;
    rssPeakMb: number;
    heapUsedEndMb: number;
  };
}

const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
const quiet = { progress: 'none' as const, log: () => undefined };

async function withStore<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'standoff-bench-runner-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const SUBJECTS = [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }];
const JUDGES = [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }];

async function episodeMeans(s: RunSummary, traces: string): Promise<{ turns: number; latencyMs: number }> {
  const { openStore } = await import('../src/store/open-store.ts');
  const { query } = await import('../src/store/duckdb.ts');
  const st = await openStore(traces, { runs: [s.runId] });
  try {
    const r = await query(st.conn, 'SELECT avg(turns) AS t, avg(latency_ms) AS l FROM episodes');
    return { turns: Number(r.rows[0].t), latencyMs: Number(r.rows[0].l) };
  } finally {
    st.close();
  }
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

export async function benchRunner(): Promise<RunnerBenchResult> {
  const quick = process.env.BENCH_RUNNER_QUICK === '1';
  const longEpisodes = Number(process.env.BENCH_RUNNER_LONG_EPISODES ?? (quick ? 270 : 10_044)); // the 10,000-episode memory target

  // Warm-up (JIT, module loading, DuckDB) so the demo number is the steady-state one.
  await withStore((traces) =>
    runEvaluation({ config: parseConfig({ name: 'warm', subjects: SUBJECTS, judges: JUDGES, epochs: 1, concurrency: 16, scenarios: ['em_act_a', 'ct_esc_a', 'fc_amb_a'] }), runId: 'warm', traces, ...quiet }),
  );

  // 1. demo preset
  const demo = await withStore(async (traces) => {
    const s = await runCommand({ preset: 'demo', traces, ...quiet, handleSignals: false });
    return { episodes: s.episodes, wallMs: s.wallMs, phases: s.phases, requests: s.requests, episodesPerSec: Math.round((s.episodes / s.wallMs) * 10000) / 10, rssMb: mb(process.memoryUsage().rss) };
  });

  // 2. throughput at concurrency 32, 100 ms latency, agent episodes only
  const latencyMs = 100;
  const throughput = await withStore(async (traces) => {
    const cfg = parseConfig({
      name: 'tput',
      subjects: SUBJECTS,
      judges: [],
      probes: false,
      epochs: quick ? 2 : 6,
      concurrency: 32,
      seed: 1,
      sim: { latency_ms: latencyMs },
    } satisfies ConfigInput);
    const stamps: number[] = [];
    let elu: ReturnType<typeof performance.eventLoopUtilization> | null = null;
    const s = await runEvaluation({
      config: cfg,
      runId: 'tput',
      traces,
      ...quiet,
      onUnit: (done, total) => {
        if (stamps.length === 0) elu = performance.eventLoopUtilization();
        stamps.push(performance.now());
        if (done === total && elu) elu = performance.eventLoopUtilization(elu);
      },
    });
    const rps = s.requests / (s.phases.units / 1000);
    const ideal = 32 / (latencyMs / 1000);
    // Steady state: units finished between 10% and 90% of the run (no ramp-up, no tail).
    const a = Math.floor(stamps.length * 0.1);
    const b = Math.floor(stamps.length * 0.9);
    const secPerUnit = (stamps[b] - stamps[a]) / 1000 / (b - a);
    const steady = (1 / secPerUnit) * (s.requests / s.episodes);
    const modelMsPerEpisode = (s.sim?.answerMs ?? 0) / s.episodes;
    return {
      steadyRequestsPerSec: r1(steady),
      steadyEfficiency: Math.round((steady / ideal) * 1000) / 1000,
      concurrency: 32,
      latencyMs,
      requests: s.requests,
      unitsMs: s.phases.units,
      requestsPerSec: r1(rps),
      idealPerSec: ideal,
      efficiency: Math.round((rps / ideal) * 1000) / 1000,
      mainThreadBusy: r2((elu as ReturnType<typeof performance.eventLoopUtilization> | null)?.utilization ?? NaN),
      episodes: s.episodes,
      journalSyncs: s.journalSyncs,
      overheadPerEpisodeMs: r1(32 * secPerUnit * 1000 - modelMsPerEpisode),
    };
  });

  // 3. overhead per episode (concurrency 1)
  const overhead = await withStore(async (traces) => {
    const base = {
      name: 'ovh',
      subjects: SUBJECTS,
      judges: [],
      probes: false,
      epochs: 1,
      concurrency: 1,
      seed: 2,
      ...(quick ? { scenarios: ['em_act_a', 'ct_esc_b', 'fc_amb_a', 'em_amb_b'] } : {}),
    } satisfies ConfigInput;
    const slow = await runEvaluation({ config: parseConfig({ ...base, sim: { latency_ms: latencyMs } }), runId: 'slow', traces, ...quiet });
    const means = await episodeMeans(slow, traces);
    const fast = await runEvaluation({ config: parseConfig(base), runId: 'fast', traces, ...quiet });
    const meanEpisodeMs = slow.phases.units / slow.episodes;
    const modelMsPerEpisode = (slow.sim?.answerMs ?? 0) / slow.episodes;
    return {
      episodes: slow.episodes,
      latencyMs,
      meanEpisodeMs: r1(meanEpisodeMs),
      meanTurns: r2(means.turns),
      modelMsPerEpisode: r1(modelMsPerEpisode),
      overheadPerEpisodeMs: r1(meanEpisodeMs - modelMsPerEpisode),
      inEpisodeOverheadMs: r1(means.latencyMs - modelMsPerEpisode),
      afterEpisodeMs: r1(meanEpisodeMs - means.latencyMs),
      overheadVsNominalLatencyMs: r1(meanEpisodeMs - means.turns * latencyMs),
      journalSyncs: slow.journalSyncs,
      zeroLatencyEpisodeMs: r1(fast.phases.units / fast.episodes),
    };
  });

  // 4. memory over a long run
  let memory: RunnerBenchResult['memory'] = null;
  if (longEpisodes > 0) {
    memory = await withStore(async (traces) => {
      const epochs = Math.max(1, Math.round(longEpisodes / (3 * 18)));
      const cfg = parseConfig({ name: 'long', subjects: SUBJECTS, judges: JUDGES, epochs, concurrency: 32, seed: 3, retries: { max: 4, base_ms: 50, max_ms: 2000 } });
      const total = 3 * 18 * epochs;
      (globalThis as { gc?: () => void }).gc?.();
      const rssStart = process.memoryUsage().rss;
      let peakUnits = rssStart;
      let peak = rssStart;
      const at: Record<string, number> = {};
      let unitsDone = false;
      const timer = setInterval(() => {
        const r = process.memoryUsage().rss;
        peak = Math.max(peak, r);
        if (!unitsDone) peakUnits = Math.max(peakUnits, r);
      }, 100);
      const marks = [0.25, 0.5, 0.75, 1];
      const s = await runEvaluation({
        config: cfg,
        runId: 'long',
        traces,
        ...quiet,
        onUnit: (done) => {
          const f = marks.find((m) => done === Math.round(total * m));
          if (f) at[`${Math.round(f * 100)}%`] = mb(process.memoryUsage().rss);
          if (done === total) unitsDone = true;
        },
      });
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage().rss);
      return {
        episodes: s.episodes,
        wallMs: s.wallMs,
        rssStartMb: mb(rssStart),
        rssAtMb: at,
        rssPeakDuringUnitsMb: mb(peakUnits),
        rssPeakMb: mb(peak),
        heapUsedEndMb: mb(process.memoryUsage().heapUsed),
      };
    });
  }
  return { demo, throughput, overhead, memory };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await benchRunner();
  console.log(JSON.stringify(r, null, 2));
}
