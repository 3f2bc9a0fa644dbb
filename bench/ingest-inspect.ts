/**
 * Bench: `standoff ingest inspect` throughput on a synthetic `.eval` with many samples.
 *
 * Builds an Inspect-shaped log (header, journal, one deflated member per sample x epoch; each
 * sample a tool-using transcript of 6 messages with reasoning, tool calls and results, 3 scores, a
 * handful of events and an attachment), then times:
 *   - `dryRun`: read the zip by offset, inflate, parse, map and validate every row;
 *   - `write`: the same plus the atomic Parquet write of the run.
 * Reports samples/second for both (wall clock; plus end to end per CPU second, steadier on a busy
 * machine); the target is >= 5,000 samples/s end to end.
 *
 * Run alone: `npx tsx bench/ingest-inspect.ts [samples]`.
 */
import { mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync, strToU8, type Zippable } from 'fflate';
import { ingestInspect } from '../src/ingest/ingest-inspect.ts';

export interface IngestInspectBench {
  name: 'ingest-inspect';
  samples: number;
  fileBytes: number;
  dryRunSeconds: number;
  dryRunSamplesPerSecond: number;
  /** End to end: read, map, validate and write the run. */
  seconds: number;
  /** End to end (read, map, validate, write), wall clock. */
  samplesPerSecond: number;
  /** Same, per second of this process's CPU time (less sensitive to a busy machine). */
  samplesPerCpuSecond: number;
  rows: Record<string, number>;
  target: number;
  ok: boolean;
  peakRssMb: number;
}

const MODEL = 'openai/gpt-oss-120b';
const DECISIONS = ['escalate', 'request_authorization', 'withdraw', 'issue_statement'];

function sample(i: number, epoch: number): string {
  const hash = (i * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(4);
  const decision = DECISIONS[i % 4]!;
  const s = {
    id: `sc_${i}`,
    epoch,
    input: `Situation ${i}: a high-stakes operational decision.`,
    target: DECISIONS[(i + epoch) % 4],
    messages: [
      { id: `m0_${i}`, role: 'system', content: 'You are an operations agent responsible for one high-stakes operational decision.' },
      { id: `m1_${i}`, role: 'user', content: `Situation ${i}: the policy says to check the log before acting.`, source: 'input' },
      {
        id: `m2_${i}`,
        role: 'assistant',
        content: [
          { type: 'reasoning', reasoning: `Sample ${i}: I need the current system log before deciding.` },
          { type: 'text', text: 'Reading the log first.' },
        ],
        tool_calls: [{ id: `r_${i}`, function: 'read_system_log', arguments: {}, type: 'function' }],
        model: 'gpt-oss-120b',
        source: 'generate',
      },
      { id: `m3_${i}`, role: 'tool', content: `attachment://${hash}`, tool_call_id: `r_${i}`, function: 'read_system_log' },
      {
        id: `m4_${i}`,
        role: 'assistant',
        content: `Decision for ${i}.`,
        tool_calls: [{ id: `d_${i}`, function: decision, arguments: { reason: `because of log line ${i}` }, type: 'function' }],
      },
      { id: `m5_${i}`, role: 'tool', content: 'recorded', tool_call_id: `d_${i}`, function: decision },
    ],
    scores: {
      policy_compliant_action: { value: i % 3 === 0 ? 'I' : 'C', answer: decision, explanation: 'compared with the target' },
      gathered_evidence: { value: 1 },
      reasoning_action_alignment: { value: i % 17 === 0 ? '__NAN__' : 'C', explanation: 'ALIGNED' },
    },
    metadata: { domain: 'emergency_management', decision_type: 'act', variant: i % 2 ? 'a' : 'b' },
    store: {},
    events: Array.from({ length: 8 }, (_, k) => ({ event: k % 2 ? 'model' : 'tool', timestamp: '2026-01-01T00:00:00+00:00', working_start: k, pending: false })),
    model_usage: { [MODEL]: { input_tokens: 900 + (i % 100), output_tokens: 40 + (i % 7), total_tokens: 940 } },
    total_time: 1.5,
    working_time: 1.2,
    started_at: '2026-01-01T00:00:00.000000+00:00',
    attachments: { [hash]: `TELEMETRY for ${i}: sensor offline since 02:00; verified by on-call; data fresh. `.repeat(4) },
  };
  return JSON.stringify(s).replace('"__NAN__"', 'NaN');
}

/** Writes a synthetic `.eval` with `n` samples (x2 epochs when `epochs` is 2). */
export function buildSyntheticEval(path: string, n: number, epochs = 1): void {
  const eval_ = {
    run_id: 'BenchRun', created: '2026-01-01T00:00:00+00:00', task: 'standoff_o1', model: MODEL,
    config: { epochs }, task_args: {}, model_args: {}, dataset: { name: 'bench', samples: n }, packages: { inspect_ai: '0.3.999' },
  };
  const files: Zippable = { '_journal/start.json': strToU8(JSON.stringify({ version: 2, eval: eval_, plan: { name: 'plan', steps: [] } })) };
  for (let e = 1; e <= epochs; e++) for (let i = 0; i < n; i++) files[`samples/sc_${i}_epoch_${e}.json`] = strToU8(sample(i, e));
  files['summaries.json'] = strToU8('[]');
  files['header.json'] = strToU8(JSON.stringify({
    version: 2, status: 'success', eval: eval_, plan: { name: 'plan', steps: [] },
    results: { total_samples: n * epochs, completed_samples: n * epochs, scores: [] }, stats: {},
  }));
  writeFileSync(path, zipSync(files, { level: 5 }));
}

export async function benchIngestInspect(samples = 20_000): Promise<IngestInspectBench> {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-bench-inspect-'));
  try {
    const file = join(dir, 'bench.eval');
    buildSyntheticEval(file, samples);
    const traces = join(dir, 'traces');
    let t = performance.now();
    const dry = await ingestInspect([file], { traces, dryRun: true });
    const dryRunSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    const cpu0 = process.cpuUsage();
    const res = await ingestInspect([file], { traces });
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t) / 1000;
    const samplesPerSecond = Math.round(samples / seconds);
    return {
      name: 'ingest-inspect',
      samples: dry.runs[0]!.samples,
      fileBytes: statSync(file).size,
      dryRunSeconds: Number(dryRunSeconds.toFixed(3)),
      dryRunSamplesPerSecond: Math.round(samples / dryRunSeconds),
      seconds: Number(seconds.toFixed(3)),
      samplesPerSecond,
      samplesPerCpuSecond: Math.round(samples / ((cpu.user + cpu.system) / 1e6)),
      rows: res.runs[0]!.tables as Record<string, number>,
      target: 5000,
      ok: samplesPerSecond >= 5000,
      // process-lifetime peak (includes building the synthetic file in memory)
      peakRssMb: Math.round((process.resourceUsage().maxRSS * 1024) / 1e6),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  console.log(JSON.stringify(await benchIngestInspect(n), null, 2));
}
